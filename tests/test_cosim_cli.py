"""abduct-cosim installed with the rest: `abduct eval cosim` with random and clip:tiny on the
synthetic corpus, and `abduct score cosim` on the real val file (read in place)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct_testing import shared_data_dir
from conftest import abduct


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cosim") / "data"
    done = abduct("cosim", "synth", "--out", str(out), "--train", "12", "--val", "30")
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("model", ["random", "clip:tiny,workers=0"])
def test_eval_cosim(corpus: Path, tmp_path: Path, model: str) -> None:
    done = abduct("eval", "cosim", "--model", model, "--data", str(corpus), "--out", str(tmp_path), "--json",
                  "--quiet", "--no-cache")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert results["metrics"]["n"] == 30 and 0 <= results["metrics"]["accuracy"] <= 100
    assert results["inputs"]["ignored"] == ["context"]
    assert len((tmp_path / "predictions.jsonl").read_text().splitlines()) == 30


def test_score_cosim_on_the_real_val_file(tmp_path: Path) -> None:
    shared = shared_data_dir()
    if shared is None or not (shared / "cosim" / "val.json").is_file():
        pytest.skip("the real CoSIm val.json (shared/data/cosim) is not available here")
    raw = json.loads((shared / "cosim" / "val.json").read_text())
    (tmp_path / "p.json").write_text(json.dumps([[0, 0, 0, 0]] * len(raw)))
    done = abduct("score", "cosim", "--predictions", str(tmp_path / "p.json"),
                  "--answer-key", str(shared / "cosim" / "val.json"), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["accuracy"] == 25.75  # all ties -> index 0: 206 of 800 labels are 0


def test_the_dataset_options_change_what_is_read(corpus: Path, tmp_path: Path) -> None:
    """``--dataset cosim,...``: the context the task shows (results.json says which), the image
    folder (one that does not exist is one line)."""
    done = abduct("eval", "cosim", "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "n"), "--json",
                  "--quiet", "--no-cache", "--dataset", "cosim,context=none")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["details"]["context"] == "none"
    missing = abduct("eval", "cosim", "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "m"),
                     "--quiet", "--no-cache", "--dataset", "cosim,image_root=/nonexistent")
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert "image_root=) not found: /nonexistent" in missing.stderr
