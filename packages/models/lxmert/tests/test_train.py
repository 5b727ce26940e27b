"""``abduct train lxmert``: the triplet loss goes down and beats chance, a killed run resumes
to the weights of an uninterrupted one, and ``--task cosim`` trains the 4-way head."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from safetensors.torch import load_file

from abduct_modelkit.training import LOG
from abduct_regions.training import LAST, STATE_FILE
from abduct_testing import killed_once, main

COMMON = ["--model", "lxmert:tiny,cache=false", "--device", "cpu", "--lr", "2e-3", "--warmup", "4", "--quiet"]


def args(data: Path, out: Path, steps: int, every: int, *extra: str) -> list[str]:
    return ["train", "lxmert", "--data", str(data), "--out", str(out), "--steps", str(steps),
            "--checkpoint-every", str(every), "--log-every", "20", *COMMON, *extra]


def log(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / LOG).read_text().splitlines()]


def weights(directory: Path) -> dict[str, Any]:
    return load_file(str(directory / "model.safetensors"))


def test_triplet_training_lowers_the_loss(tmp_path: Path, pair_data: Path, test_registry: Any,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main(args(pair_data, tmp_path / "run", 100, 50, "--dataset", "toy-pairs", "--batch-size", "8"))
    assert code == 0, capsys.readouterr().err
    rows = log(tmp_path / "run")
    losses = [r["loss"] for r in rows if "loss" in r]
    assert losses[-1] < 0.6 * losses[0]
    validation = [(r["step"], r["val_p_at_1"]) for r in rows if "val_p_at_1" in r]
    assert [step for step, _ in validation] == [50, 100]
    assert validation[-1][1] > 100 / 3 + 10  # chance: one of three inferences per group
    assert (tmp_path / "run" / "best" / "score_head.safetensors").is_file()


def test_resume_after_a_kill_gives_the_same_weights(tmp_path: Path, pair_data: Path, test_registry: Any) -> None:
    # a real process, killed (by a watcher thread) once a checkpoint exists and before the end; it
    # starts first, so that its imports overlap the uninterrupted run trained here meanwhile
    script = ("import sys; from abduct_regions.testing import install_test_plugin; install_test_plugin(); "
              "from abduct.host import main; sys.exit(main(sys.argv[1:]))")
    cmd = [sys.executable, "-c", script, *args(pair_data, tmp_path / "killed", 16, 4, "--dataset", "toy-pairs", "--batch-size", "4")]
    process = subprocess.Popen(cmd, env={**os.environ}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    state = tmp_path / "killed" / LAST / STATE_FILE
    with killed_once(process, state):
        assert main(args(pair_data, tmp_path / "whole", 16, 4, "--dataset", "toy-pairs", "--batch-size", "4")) == 0
    assert state.is_file() or (tmp_path / "killed" / (LAST + ".old") / STATE_FILE).is_file()
    assert main(args(pair_data, tmp_path / "killed", 16, 4, "--dataset", "toy-pairs", "--batch-size", "4")) == 0
    whole, resumed = weights(tmp_path / "whole" / LAST), weights(tmp_path / "killed" / LAST)
    assert whole.keys() == resumed.keys()
    for key in whole:
        assert (whole[key] == resumed[key]).all(), key


def test_settings_must_match_to_resume(tmp_path: Path, pair_data: Path, test_registry: Any,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args(pair_data, tmp_path / "run", 2, 2, "--dataset", "toy-pairs", "--batch-size", "4")) == 0
    capsys.readouterr()
    assert main(args(pair_data, tmp_path / "run", 4, 2, "--dataset", "toy-pairs", "--batch-size", "4", "--margin", "0.5")) == 2
    assert "other settings" in capsys.readouterr().err


def test_cosim_head_trains_on_four_choices(tmp_path: Path, choice_data: Path, test_registry: Any,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code = main(args(choice_data, tmp_path / "run", 40, 40, "--task", "cosim", "--dataset", "toy-choices",
                     "--batch-size", "4"))
    assert code == 0, capsys.readouterr().err
    rows = log(tmp_path / "run")
    losses = [r["loss"] for r in rows if "loss" in r]
    assert losses[-1] < losses[0] and "val_accuracy" in rows[-1]
