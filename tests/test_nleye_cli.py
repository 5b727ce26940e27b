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


def test_the_dataset_image_root_option_moves_what_every_task_reads(corpus: Path, tmp_path: Path) -> None:
    import shutil

    swapped = shutil.copytree(corpus / "images", tmp_path / "swapped")
    for folder in swapped.iterdir():  # each sample's hypotheses swapped: dumb-pixel's choices flip
        (folder / "hypothesis1.png").rename(folder / "h.png")
        (folder / "hypothesis2.png").rename(folder / "hypothesis1.png")
        (folder / "h.png").rename(folder / "hypothesis2.png")
    runs = {}
    for name, extra in (("plain", ()), ("swapped", ("--dataset", f"nleye,image_root={swapped}"))):
        done = abduct("eval", "nleye-triplet", "--model", "dumb-pixel", "--data", str(corpus), "--out",
                      str(tmp_path / name), "--json", "--quiet", "--no-cache", *extra)
        assert done.returncode == 0, done.stderr
        runs[name] = json.loads(done.stdout)["metrics"]
    assert runs["swapped"]["order1_accuracy"] == 100.0 - runs["plain"]["order1_accuracy"] != runs["plain"]["order1_accuracy"]
    missing = abduct("eval", "nleye-explanation", "--model", "random", "--data", str(corpus), "--out",
                     str(tmp_path / "m"), "--quiet", "--no-cache", "--dataset", "nleye,image_root=/nonexistent")
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert "image_root=) not found: /nonexistent" in missing.stderr
