"""CLIP on Sherlock through the CLI: a tiny model end to end, and the demo's output shape."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import abduct


def test_clip_tiny_evaluates_sherlock_retrieval(tmp_path: Path) -> None:
    assert abduct("sherlock", "synth", "--out", str(tmp_path / "d"), "--images", "24").returncode == 0
    run = abduct("eval", "sherlock-retrieval", "--model", "clip:tiny", "--data", str(tmp_path / "d"),
                 "--out", str(tmp_path / "o"), "--quiet", "--json", "--cache-dir", str(tmp_path / "cache"))
    assert run.returncode == 0, run.stderr
    results = json.loads(run.stdout)
    assert {"im2txt", "txt2im", "p_at_1"} <= set(results["metrics"])
    assert "torch" in results["versions"] and "open_clip_torch" in results["versions"]
    again = abduct("eval", "sherlock-retrieval", "--model", "clip:tiny", "--data", str(tmp_path / "d"),
                   "--out", str(tmp_path / "o2"), "--quiet", "--json", "--cache-dir", str(tmp_path / "cache"))
    second = json.loads(again.stdout)
    assert second["metrics"] == results["metrics"]
    assert second["timings"]["model_seconds"] == 0.0  # every embedding came from the cache


def test_demo_json_shape(tmp_path: Path) -> None:
    run = abduct("demo", "--images", "24", "--steps", "4", "--json", "--quiet", "--only", "sherlock-clip",
                 "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    table = json.loads(run.stdout)
    assert set(table) == {"sherlock-clip"} and set(table["sherlock-clip"]) == {"random", "zero_shot", "fine_tuned"}
    assert (tmp_path / "sherlock-clip" / "train").is_dir()  # kept with --out
    for metrics in table["sherlock-clip"].values():
        assert {"im2txt", "txt2im", "p_at_1"} <= set(metrics["sherlock-retrieval"])
        assert "gt_accuracy" in metrics["sherlock-localization"]
        assert "accuracy" in metrics["sherlock-comparison"]
