"""``abduct train clip``: runs on a synthetic Sherlock corpus, logs, keeps the best
checkpoint, and a run killed with SIGKILL resumes to the same final weights."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from abduct_clip._train import top1_fraction

ABDUCT = [sys.executable, "-c", "import sys; from abduct.cli import main; sys.exit(main())"]
STEPS = 12


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from abduct_sherlock.synth import synthesize

    return synthesize(tmp_path_factory.mktemp("sherlock"), images=24, seed=1)


def _train_args(data: Path, out: Path) -> list[str]:
    return [*ABDUCT, "train", "clip", "--data", str(data), "--out", str(out), "--model", "clip:tiny",
            "--steps", str(STEPS), "--batch-size", "8", "--lr", "1e-3", "--warmup", "3",
            "--checkpoint-every", "4", "--log-every", "2", "--val-limit", "16", "--workers", "1", "--seed", "5"]


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1"}


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, weights_only=True)["model_state_dict"]  # type: ignore[no-any-return]


def test_killed_training_resumes_from_its_checkpoint(corpus: Path, tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    done = subprocess.run(_train_args(corpus, reference), env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    log = [json.loads(line) for line in (reference / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if "loss" in r] == list(range(2, STEPS + 1, 2))
    assert [r["step"] for r in log if "val_p_at_1" in r] == [4, 8, 12]
    assert (reference / "best.pt").is_file()

    out = tmp_path / "killed"
    process = subprocess.Popen(_train_args(corpus, out), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while not (out / "last.pt").exists():
        assert process.poll() is None, "training ended before writing its first checkpoint"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    stopped_at = torch.load(out / "last.pt", weights_only=True)["step"]
    assert stopped_at < STEPS, "the kill came too late to test anything"

    resumed = subprocess.run(_train_args(corpus, out), env=_env(), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming from {out / 'last.pt'} at step {stopped_at}" in resumed.stderr
    final, expected = _weights(out / "last.pt"), _weights(reference / "last.pt")
    for name, tensor in expected.items():
        torch.testing.assert_close(final[name], tensor, rtol=1e-4, atol=1e-5, msg=name)
    rows = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "loss" in r] == list(range(2, STEPS + 1, 2))  # no duplicated steps

    # the trained checkpoint is a ready scorer that remembers its settings
    from abduct.spec import ModelOptions, ModelSpec
    from abduct_clip._scorer import make_clip

    scorer = make_clip(ModelSpec.parse(f"clip:{out / 'best.pt'}"), ModelOptions())
    assert scorer.settings.mode == "highlight" and "sha256:" in scorer.fingerprint


def test_resuming_with_other_settings_is_refused(corpus: Path, tmp_path: Path) -> None:
    from abduct.cli import main

    out = tmp_path / "run"
    args = _train_args(corpus, out)[len(ABDUCT):]
    args[args.index("--steps") + 1] = "2"
    assert main(args + ["--quiet"]) == 0
    args[args.index("--lr") + 1] = "1e-4"
    assert main(args + ["--quiet"]) == 2


def test_top1_fraction_counts_ties_as_misses() -> None:
    sims = np.array([[0.9, 0.1, 0.2], [0.5, 0.5, 0.1], [0.0, 0.3, 0.2]])
    assert top1_fraction(sims) == pytest.approx(1 / 3)
    assert top1_fraction(np.zeros((4, 4))) == 0.0
