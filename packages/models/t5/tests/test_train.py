"""``abduct train t5``: validation loss goes down, the best checkpoint loads as ``t5:DIR``,
and a run killed in the middle resumes to exactly the weights of an uninterrupted run.

One uninterrupted run (the ``reference`` fixture, trained once per module) serves both: it is
the run whose loss must go down, and the run the killed-and-resumed one must equal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from abduct.host import reset_registry
from abduct_t5._train import BEST, LAST, STATE
from abduct_testing import main
from abduct_testing.toy import install_toy_registry

TRAIN = ["--dataset", "toy-pairs", "--model", "t5:tiny", "--batch-size", "8", "--device", "cpu", "--quiet"]
STEPS, EVERY = 48, 8  # the reference's settings, which the killed run repeats (40 steps left after a kill)


def train_args(data: Path, out: Path, steps: int = STEPS, every: int = EVERY) -> list[str]:
    return ["train", "t5", "--data", str(data), "--out", str(out), "--steps", str(steps), "--eval-every", str(every),
            *TRAIN]


@pytest.fixture(scope="module")
def reference(pair_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uninterrupted training run, in this process, read by the tests below (never written)."""
    out = tmp_path_factory.mktemp("reference") / "run"
    install_toy_registry()
    try:
        assert main(train_args(pair_data, out)) == 0
    finally:
        reset_registry(None)
    return out


def test_training_lowers_validation_loss_and_best_loads(tmp_path: Path, reference: Path, pair_data: Path,
                                                        test_registry: Any, capsys: pytest.CaptureFixture[str]) -> None:
    history = json.loads((reference / LAST / STATE).read_text())["history"]
    assert [h["step"] for h in history] == list(range(0, STEPS + 1, EVERY))
    assert min(h["val_loss"] for h in history[1:]) < history[0]["val_loss"] - 0.5
    best = json.loads((reference / BEST / STATE).read_text())
    assert best["val_loss"] == min(h["val_loss"] for h in history)
    assert (reference / BEST / "model.safetensors").is_file()
    code = main(["eval", "toy-match", "--model", f"t5:{reference / BEST}", "--data", str(pair_data),
                 "--out", str(tmp_path / "eval"), "--quiet", "--json", "--no-cache"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["accuracy"] > 25.0  # chance is 25


def test_unknown_dataset_and_bad_model_are_one_line(tmp_path: Path, pair_data: Path, test_registry: Any,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    args = train_args(pair_data, tmp_path / "a", steps=1)
    assert main([*args, "--dataset", "nope"]) == 2
    assert main([*args[:-1], "--model", "clip:tiny", "--quiet"]) == 2
    assert main([*args, "--model", f"t5:{tmp_path / 'none'}"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(errors) == 3 and all(e.startswith("error: ") for e in errors)


CHILD = """
import sys
from abduct_testing import main
from abduct_testing.toy import install_toy_registry
install_toy_registry()
sys.exit(main({args!r}))
"""


def _spawn(args: list[str]) -> subprocess.Popen[bytes]:
    code = CHILD.format(args=args)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_kill_and_resume_gives_the_uninterrupted_weights(tmp_path: Path, reference: Path, pair_data: Path,
                                                         test_registry: Any) -> None:
    """A child process is killed (SIGKILL) after a checkpoint; this process resumes it: the
    weights are byte-for-byte those of the same run trained uninterrupted (``reference``)."""
    victim = _spawn(train_args(pair_data, tmp_path / "killed"))
    state = tmp_path / "killed" / LAST / STATE
    deadline = time.monotonic() + 240  # the child's imports, on a loaded machine
    while time.monotonic() < deadline and victim.poll() is None:
        if state.is_file() and json.loads(state.read_text() or "{}").get("step", 0) >= EVERY:
            break
        time.sleep(0.01)
    assert victim.poll() is None, "training ended before it could be killed"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    killed_at = json.loads(state.read_text())["step"]
    assert 0 < killed_at < STEPS
    assert main(train_args(pair_data, tmp_path / "killed")) == 0
    for name in (BEST, LAST):
        assert (tmp_path / "killed" / name / "model.safetensors").read_bytes() == \
            (reference / name / "model.safetensors").read_bytes()
    ref_state = json.loads((reference / LAST / STATE).read_text())
    assert json.loads((tmp_path / "killed" / LAST / STATE).read_text())["history"] == ref_state["history"]
