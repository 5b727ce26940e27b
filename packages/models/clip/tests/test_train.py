"""``abduct train clip`` on a registered pair dataset: runs, logs, keeps the best checkpoint,
a run killed with SIGKILL resumes to the same final weights, and a dataset that cannot give
pairs is a one-line error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from clip_helpers import clip_model, install_test_plugin

from abduct.host import Registry, build_registry, reset_registry
from abduct.kit import install_command
from abduct_clip._train import examples_from_pairs, top1_fraction
from abduct_testing import PairsFile, killed_once, main

TESTS = Path(__file__).resolve().parent
# `abduct` in a fresh process, with this package's test plugin registered (its toy dataset).
ABDUCT = [sys.executable, "-c",
          f"import sys; sys.path.insert(0, {str(TESTS)!r}); import clip_helpers; clip_helpers.install_test_plugin(); "
          "from abduct.host import main; sys.exit(main())"]
STEPS = 12


def _train_args(data: Path, out: Path) -> list[str]:
    return [*ABDUCT, "train", "clip", "--data", str(data), "--dataset", "toy-pairs", "--out", str(out),
            "--model", "clip:tiny", "--steps", str(STEPS), "--batch-size", "8", "--lr", "1e-3", "--warmup", "3",
            "--checkpoint-every", "4", "--log-every", "2", "--val-limit", "16", "--workers", "1", "--seed", "5",
            "--device", "cpu"]


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1"}


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, weights_only=True)["model_state_dict"]  # type: ignore[no-any-return]


def _train_here(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """``abduct ARGS`` in this process, on one compute thread as the child's OMP_NUM_THREADS=1
    gives it (the sums then add up in the same order); returns its stderr."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        code = main(args[len(ABDUCT):])
    finally:
        torch.set_num_threads(threads)
    err = capsys.readouterr().err
    assert code == 0, err
    return err


def test_killed_training_resumes_from_its_checkpoint(pair_data: Path, tmp_path: Path, test_registry: Registry,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The uninterrupted reference and the resumed run train in this process; the run that is
    killed is a real process (SIGKILL), started first so that its imports overlap the reference,
    and killed by a watcher thread as soon as its first checkpoint exists."""
    out = tmp_path / "killed"
    process = subprocess.Popen(_train_args(pair_data, out), env=_env(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    with killed_once(process, out / "last.pt"):
        reference = tmp_path / "reference"
        _train_here(_train_args(pair_data, reference), capsys)
        log = [json.loads(line) for line in (reference / "train_log.jsonl").read_text().splitlines()]
        assert [r["step"] for r in log if "loss" in r] == list(range(2, STEPS + 1, 2))
        assert [r["step"] for r in log if "val_p_at_1" in r] == [4, 8, 12]
        assert (reference / "best.pt").is_file()
    assert (out / "last.pt").is_file(), "killed before its first checkpoint (the 240 s limit passed)"
    stopped_at = torch.load(out / "last.pt", weights_only=True)["step"]
    assert stopped_at < STEPS, "the kill came too late to test anything"

    err = _train_here(_train_args(pair_data, out), capsys)
    assert f"resuming from {out / 'last.pt'} at step {stopped_at}" in err
    final, expected = _weights(out / "last.pt"), _weights(reference / "last.pt")
    for name, tensor in expected.items():
        torch.testing.assert_close(final[name], tensor, rtol=1e-4, atol=1e-5, msg=name)
    rows = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "loss" in r] == list(range(2, STEPS + 1, 2))  # no duplicated steps

    # the trained checkpoint is a ready scorer that remembers its settings
    scorer = clip_model(f"clip:{out / 'best.pt'}")
    assert scorer.settings.mode == "highlight" and "sha256:" in scorer.fingerprint


def test_resuming_with_other_settings_is_refused(pair_data: Path, tmp_path: Path, test_registry: Registry) -> None:
    out = tmp_path / "run"
    args = _train_args(pair_data, out)[len(ABDUCT):]
    args[args.index("--steps") + 1] = "2"
    assert main(args + ["--quiet"]) == 0
    args[args.index("--lr") + 1] = "1e-4"
    assert main(args + ["--quiet"]) == 2
    args[args.index("--lr") + 1] = "1e-3"
    args[args.index("--dataset") + 1] = "toy-pairs,"  # another dataset spec: refused as well
    assert main(args + ["--quiet"]) == 2


def _train_once(data: Path, out: Path, *extra: str) -> list[str]:
    return ["train", "clip", "--data", str(data), "--out", str(out), "--steps", "1", "--batch-size", "4",
            "--quiet", *extra]


def test_a_dataset_without_pairs_is_a_one_line_error(
    pair_data: Path, tmp_path: Path, test_registry: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_train_once(pair_data, tmp_path / "a", "--dataset", "toy-no-pairs")) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: dataset 'toy-no-pairs' does not offer training pairs "
                   "(no pairs(data_dir, split); see abduct.PairDataset)")
    assert main(_train_once(pair_data, tmp_path / "b", "--dataset", "toy-pears")) == 2
    assert "unknown dataset 'toy-pears'; did you mean 'toy-pairs'" in capsys.readouterr().err


def test_sherlock_not_installed_names_the_package(
    pair_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ABDUCT_DISABLE_PLUGINS", "sherlock")
    reset_registry(build_registry())
    try:
        assert main(_train_once(pair_data, tmp_path / "run")) == 2  # --dataset sherlock is the default
    finally:
        reset_registry(None)
    err = capsys.readouterr().err.strip()
    assert err == ("error: training needs the dataset 'sherlock', which comes with abduct-sherlock: "
                   f"{install_command('abduct-sherlock')}")


def test_examples_keep_the_dataset_order_clue_and_group(pair_data: Path) -> None:
    pairs = PairsFile().pairs(pair_data, "val")
    examples = examples_from_pairs(pairs)
    assert [e.inference for e in examples] == [p.text for p in pairs]
    assert [(e.clue, e.chunk) for e in examples] == [(p.visual.context, p.group) for p in pairs]
    assert examples[0].clue is not None and examples[0].chunk == "0"


def test_train_clip_help_shows_the_shared_settings(capsys: pytest.CaptureFixture[str]) -> None:
    install_test_plugin()
    try:
        assert main(["train", "clip", "--help"]) == 0
    finally:
        reset_registry(None)
    text = " ".join(capsys.readouterr().out.split())
    assert "--dataset" in text and "[default: sherlock]" in text
    assert "Global batch size. [default: 64;" in text and "auto (cuda when available). [default: auto]" in text


def test_top1_fraction_counts_ties_as_misses() -> None:
    sims = np.array([[0.9, 0.1, 0.2], [0.5, 0.5, 0.1], [0.0, 0.3, 0.2]])
    assert top1_fraction(sims) == pytest.approx(1 / 3)
    assert top1_fraction(np.zeros((4, 4))) == 0.0
