"""Under umask 022 every kind of output abduct writes is world-readable: evaluation outputs,
caches, the leaderboard zip, training checkpoints (CLIP, T5, LXMERT, UNITER) and the synthetic corpora."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct_testing import main


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def unreadable(root: Path) -> list[str]:
    """Files not 0644 and directories not 0755 under ``root``."""
    bad = []
    for path in root.rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        want = 0o755 if path.is_dir() else 0o644
        if mode != want:
            bad.append(f"{path.relative_to(root)}: {oct(mode)}")
    return bad


def test_every_kind_of_output_is_world_readable(tmp_path: Path, umask_022: None,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the commands below take paths relative to it, in one process
    steps = [
        ("sherlock", "synth", "--out", "sherlock", "--images", "16"),
        ("cosim", "synth", "--out", "cosim", "--train", "4", "--val", "8"),
        ("nleye", "synth", "--out", "nleye"),
        ("eval", "sherlock-retrieval", "--model", "clip:tiny", "--data", "sherlock", "--out", "runs/ret",
         "--cache-dir", "cache", "--quiet"),
        ("eval", "cosim", "--model", "random", "--data", "cosim", "--out", "runs/cosim", "--quiet"),
        ("sherlock", "submit", "--model", "random", "--data", "sherlock", "--out", "runs/submit", "--quiet"),
        ("train", "clip", "--data", "sherlock", "--out", "runs/clip", "--steps", "2", "--batch-size", "8",
         "--checkpoint-every", "2", "--workers", "0", "--quiet"),
        ("train", "t5", "--data", "sherlock", "--out", "runs/t5", "--steps", "2", "--eval-every", "2", "--quiet"),
        ("train", "lxmert", "--task", "cosim", "--data", "cosim", "--out", "runs/lxmert", "--steps", "2",
         "--batch-size", "2", "--checkpoint-every", "2", "--device", "cpu", "--model", "lxmert:tiny,cache=false",
         "--quiet"),
        ("train", "uniter", "--task", "cosim", "--data", "cosim", "--out", "runs/uniter", "--steps", "2",
         "--batch-size", "2", "--checkpoint-every", "2", "--device", "cpu", "--model", "uniter:tiny,cache=false",
         "--quiet"),
    ]
    for args in steps:
        assert main(list(args)) == 0, " ".join(args)
    for expected in ("runs/ret/results.json", "runs/ret/predictions.jsonl", "runs/ret/report.md",
                     "runs/submit/test_set_predictions.zip", "runs/clip/best.pt", "runs/t5/best", "runs/lxmert/best", "runs/uniter/best", "sherlock/SYNTHETIC",
                     "cosim/val.json", "nleye/test_set.csv"):
        assert (tmp_path / expected).exists(), expected
    assert unreadable(tmp_path) == []
