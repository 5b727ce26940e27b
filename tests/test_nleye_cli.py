"""abduct-nleye installed with the rest: `abduct eval nleye-triplet|nleye-pairs` with random,
dumb-pixel and clip:tiny (as a dual encoder: premise-hypothesis image similarity; as a
single-image model it is refused) on the synthetic corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import abduct


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nleye") / "data"
    done = abduct("nleye", "synth", "--out", str(out), "--samples", "24")
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("task, model", [
    ("nleye-triplet", "random"), ("nleye-pairs", "random"), ("nleye-pairs", "dumb-pixel"),
    ("nleye-triplet,score_by=similarity", "clip:tiny,workers=0"), ("nleye-pairs,score_by=similarity", "clip:tiny,workers=0"),
])
def test_eval(corpus: Path, tmp_path: Path, task: str, model: str) -> None:
    done = abduct("eval", task, "--model", model, "--data", str(corpus), "--out", str(tmp_path), "--json", "--quiet",
                  "--no-cache")
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    assert metrics["n"] == 24 and "by_reasoning_category" in metrics and "by_time_duration" in metrics


def test_clip_as_a_single_image_model_is_refused(corpus: Path, tmp_path: Path) -> None:
    done = abduct("eval", "nleye-pairs", "--model", "clip:tiny,workers=0", "--data", str(corpus), "--out", str(tmp_path))
    assert done.returncode == 2 and "cannot take related inputs" in done.stderr
