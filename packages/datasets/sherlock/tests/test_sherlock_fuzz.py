"""Bad Sherlock input through the CLI: one line and exit 2 (or a documented acceptance),
never a traceback, never a half-written --out. Property-based (hypothesis) fuzz of the
annotation file, the leaderboard instance file, answer keys and predictions, plus the named
cases of the fuzz the issue reports."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from abduct_sherlock.layout import annotation_file
from abduct_sherlock.synth import synthesize
from abduct_testing import fuzz_cli_input, main, run_cli

VAL = "sherlock_val_with_split_idxs_v1_1.json"
RETRIEVAL = "val_retrieval"


def _corpus(directory: Path) -> None:
    synthesize(directory, images=5, seed=0, chunk_instances=6)


def _eval(task: str) -> object:
    return lambda d: ["eval", task, "--model", "random", "--data", str(d), "--out", str(d / "out"), "--quiet"]


def _score(task: str, key: str, predictions: str = "preds.json") -> object:
    return lambda d: ["score", task, "--predictions", str(d / predictions), "--answer-key", str(d / key), "--json"]


def _corpus_and_retrieval_predictions(directory: Path) -> None:
    _corpus(directory)
    key = json.loads((directory / RETRIEVAL / "val_retrieval_0_answer_key.json").read_text())
    (directory / "preds.json").write_text(json.dumps({tid: float(i % 7) for i, tid in enumerate(sorted(key))}))


test_fuzz_annotation_file = fuzz_cli_input(_corpus, VAL, _eval("sherlock-retrieval"))  # type: ignore[arg-type]
test_fuzz_comparison_instances = fuzz_cli_input(
    _corpus, "val_comparison/val_comparison_instances.json", _eval("sherlock-comparison"), max_examples=25)  # type: ignore[arg-type]
test_fuzz_localization_answer_key = fuzz_cli_input(
    _corpus, "val_localization/val_localization_answer_key.json", _eval("sherlock-localization"),  # type: ignore[arg-type]
    max_examples=25)
test_fuzz_retrieval_predictions = fuzz_cli_input(
    _corpus_and_retrieval_predictions, "preds.json",
    _score("sherlock-retrieval", f"{RETRIEVAL}/val_retrieval_0_answer_key.json"), out=None)  # type: ignore[arg-type]
test_fuzz_retrieval_answer_key = fuzz_cli_input(
    _corpus_and_retrieval_predictions, f"{RETRIEVAL}/val_retrieval_0_answer_key.json",
    _score("sherlock-retrieval", f"{RETRIEVAL}/val_retrieval_0_answer_key.json"), out=None, max_examples=25)  # type: ignore[arg-type]


# -- the named cases ------------------------------------------------------------------------------
def test_empty_annotation_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _corpus(tmp_path / "data")
    annotation_file(tmp_path / "data", "val").write_text("[]")
    assert main(["eval", "sherlock-retrieval", "--model", "random", "--data", str(tmp_path / "data"),
                 "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and VAL in err and "empty" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out" / "predictions.jsonl").exists() and not (tmp_path / "out" / "report.md").exists()


def test_synth_out_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["sherlock", "synth", "--out", str(target), "--images", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: --out {target} is a file, not a directory"


@pytest.mark.parametrize("text", ['{"%s": NaN}', '{"%s": 1.0, "%s": 2.0}'])
def test_nan_and_duplicate_keys_in_predictions_json(tmp_path: Path, text: str) -> None:
    _corpus_and_retrieval_predictions(tmp_path)
    preds = json.loads((tmp_path / "preds.json").read_text())
    first = sorted(preds)[0]
    body = text.replace("%s", first)
    rest = ", ".join(f'"{k}": {v}' for k, v in preds.items() if k != first)
    (tmp_path / "preds.json").write_text(body[:-1] + ", " + rest + "}")
    outcome = run_cli(_score("sherlock-retrieval", f"{RETRIEVAL}/val_retrieval_0_answer_key.json")(tmp_path))  # type: ignore[operator]
    assert outcome.code == 2 and outcome.crash is None
    assert str(tmp_path / "preds.json") in outcome.err and ("NaN" in outcome.err or "duplicate key" in outcome.err)


def test_nan_in_npy_predictions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _corpus_and_retrieval_predictions(tmp_path)
    preds = json.loads((tmp_path / "preds.json").read_text())
    scores = np.array([preds[k] for k in sorted(preds)], dtype=np.float32)
    scores[2] = np.nan
    np.save(tmp_path / "preds.npy", scores)
    assert main(_score("sherlock-retrieval", f"{RETRIEVAL}/val_retrieval_0_answer_key.json", "preds.npy")(tmp_path)) == 2  # type: ignore[operator]
    err = capsys.readouterr().err
    assert f"record {sorted(preds)[2]}, field 'score'" in err and "NaN" in err


def test_image_size_differing_from_annotation_is_reported_by_check(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A documented acceptance: `abduct eval` reads the image it finds (boxes are in the
    annotation's pixels, so a resized image shifts the region); `abduct sherlock check`
    names every such image, and the README tells users to run it first."""
    data = tmp_path / "data"
    _corpus(data)
    record = json.loads(annotation_file(data, "val").read_text())[0]
    url = record["inputs"]["image"]["url"]
    image = next(p for p in (data / "images").rglob(Path(url).name))
    with Image.open(image) as loaded:
        loaded.resize((loaded.width // 2 + 1, loaded.height // 2 + 1)).save(image)
    assert main(["sherlock", "check", "--data", str(data)]) == 1
    assert "the annotation says" in capsys.readouterr().out
    assert main(["eval", "sherlock-retrieval", "--model", "random", "--data", str(data),
                 "--out", str(tmp_path / "out"), "--quiet"]) == 0
