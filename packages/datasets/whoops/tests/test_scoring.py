"""Official-format scoring (abduct score whoops-...) and the leaderboard file (abduct whoops submit)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct_testing import main
from abduct_whoops.loader import load_release, read_csv_rows
from conftest import evaluate, row, write_csv


def _score(tmp_path: Path, task: str, predictions: Any, key: Path, capsys: pytest.CaptureFixture[str],
           *extra: str) -> tuple[int, Any]:
    p = tmp_path / "p.json"
    p.write_text(predictions if isinstance(predictions, str) else json.dumps(predictions))
    capsys.readouterr()
    code = main(["score", task, "--predictions", str(p), "--answer-key", str(key), "--json", *extra])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else captured.err


@pytest.fixture
def key(tmp_path: Path) -> Path:
    return write_csv(tmp_path / "whoops_dataset.csv", [
        row("a"), row("b", commonsense_category="Biology"),
        row("c", commonsense_category="Biology", crowd_underspecified_captions=["x", "y", "z"])])


def test_matching_hand_computed_with_ties(tmp_path: Path, key: Path, capsys: pytest.CaptureFixture[str]) -> None:
    predictions = {"a": [[2, 1], [1, 1]], "b": [[0.5, 0.25], [0, 3]], "c": [[1, 0], [1, 0], [1, 2]]}
    code, out = _score(tmp_path, "whoops-matching", predictions, key, capsys)
    assert code == 0
    assert out["specificity"] == 100 * 4 / 7 and out["ties"] == 1.0  # wins: a0, b0, c0, c1; a1 ties
    assert out["by_category"]["Astronomy"] == {"specificity": 50.0, "ties": 1.0, "n": 1}
    assert out["by_category"]["Biology"]["specificity"] == 60.0
    assert sum(f["n"] for f in out["per_fold"].values()) == 3


def test_vqa_file_exact_match_hand_computed(tmp_path: Path, key: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # answers green / one: normalisation drops case, punctuation, articles; number words are digits
    predictions = {"a": ["Green.", "1"], "b": ["the green", "two"], "c": ["red", "One"]}
    code, out = _score(tmp_path, "whoops-vqa", predictions, key, capsys)
    assert code == 0 and out["exact_match"] == pytest.approx(100 * 4 / 6)
    assert out["by_category"]["Biology"]["exact_match"] == 50.0


def test_captioning_file_equals_the_eval_run(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             random_captions: tuple[dict[str, Any], Path]) -> None:
    results, run = random_captions
    records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    code, out = _score(tmp_path, "whoops-captioning", {r["image_id"]: r["prediction"] for r in records},
                       corpus / "whoops_dataset.csv", capsys)
    assert code == 0
    assert out["bleu_4"] == results["metrics"]["bleu_4"] and out["cider"] == results["metrics"]["cider"]
    assert out["by_category"] == results["details"]["by_category"]
    assert out["per_fold"] == results["details"]["per_fold"]


@pytest.mark.parametrize("task, predictions, words", [
    ("whoops-captioning", {"a": "x", "b": "y"}, "record c: no prediction for 1 image(s): c"),
    ("whoops-captioning", {"a": "x", "b": "y", "c": 3}, "record c, field 'caption': expected a caption"),
    ("whoops-captioning", {"a": "x", "b": "y", "c": "z", "q": "w"}, "record q: not an image id of the answer key"),
    ("whoops-vqa", {"a": ["x", "y"], "b": ["x"], "c": ["x", "y"]}, "record b, field 'answers': expected a list of 2"),
    ("whoops-vqa", {"a": ["x", "y"], "b": ["x", None], "c": ["x", "y"]}, "record b, field 'answers[1]'"),
    ("whoops-matching", '{"a": [[1, 0], [1, NaN]], "b": [[1, 0], [1, 0]], "c": [[1, 0], [1, 0], [1, 0]]}',
     "record a, field 'scores[1]': expected [detailed, underspecified] finite numbers"),
    ("whoops-matching", {"a": [[1, 0], [1, 0]], "b": [[1, 0], [1, 0]], "c": [[1, 0]]},
     "record c, field 'scores': expected a list of 3"),
    ("whoops-captioning", "[1, 2]", "expected a JSON object keyed by image_id, got list"),
])
def test_bad_prediction_files_exit_2(tmp_path: Path, key: Path, capsys: pytest.CaptureFixture[str], task: str,
                                     predictions: Any, words: str) -> None:
    code, err = _score(tmp_path, task, predictions, key, capsys)
    assert code == 2 and words in err and "Traceback" not in err


def test_bad_answer_key_row_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = write_csv(tmp_path / "whoops_dataset.csv", [row("a"), row("zz9", question_answering_pairs="[[1, 2]]")])
    code, err = _score(tmp_path, "whoops-vqa", {"a": ["x", "y"]}, key, capsys)
    assert code == 2 and "(image_id 'zz9'), field 'question_answering_pairs'" in err


def test_submit_writes_the_csv_plus_predictions(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                random_captions: tuple[dict[str, Any], Path]) -> None:
    runs = {"captioning": random_captions[1], "vqa": tmp_path / "vqa", "matching": tmp_path / "matching"}
    for task, run in runs.items():
        if task != "captioning":
            evaluate(corpus, run, f"whoops-{task}", "random")
        out = tmp_path / f"{task}.csv"
        assert main(["whoops", "submit", "--run", str(run), "--out", str(out)]) == 0
        assert out.read_bytes().startswith("\ufeff".encode())
        header, rows = read_csv_rows(out)
        original_header, original = read_csv_rows(corpus / "whoops_dataset.csv")
        assert header == [*original_header, "predictions"]
        assert [{k: v for k, v in r.items() if k != "predictions"} for _, r in rows] == [r for _, r in original]
        records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
        first = rows[0][1]["predictions"]
        mine = [r for r in records if r["image_id"] == "w0000"]
        if task == "captioning":
            assert first == mine[0]["prediction"]
        elif task == "vqa":
            assert json.loads(first) == [r["prediction"] for r in mine]
        else:
            assert json.loads(first) == [r["scores"] for r in mine]
    # the submitted VQA column scores like the run (answers in question order)
    predictions = {r["image_id"]: json.loads(r["predictions"]) for _, r in read_csv_rows(tmp_path / "vqa.csv")[1]}
    (tmp_path / "answers.json").write_text(json.dumps(predictions))
    capsys.readouterr()
    assert main(["score", "whoops-vqa", "--predictions", str(tmp_path / "answers.json"), "--answer-key",
                 str(corpus / "whoops_dataset.csv"), "--json"]) == 0
    run = json.loads((tmp_path / "vqa" / "results.json").read_text())
    assert json.loads(capsys.readouterr().out)["exact_match"] == run["metrics"]["exact_match"]


def test_submit_refuses_a_partial_run(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evaluate(corpus, tmp_path / "run", "whoops-captioning", "random", limit=3)
    assert main(["whoops", "submit", "--run", str(tmp_path / "run"), "--out", str(tmp_path / "x.csv")]) == 2
    assert "no prediction for image w0003 (it covers 3 of 20 images)" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
    evaluate(corpus, tmp_path / "ident", "whoops-identification", "random")
    assert main(["whoops", "submit", "--run", str(tmp_path / "ident"), "--out", str(tmp_path / "x.csv")]) == 2
    assert len(load_release(corpus).images) == 20


def test_synth_cli_and_learnable_rule(tmp_path: Path) -> None:
    assert main(["whoops", "synth", "--out", str(tmp_path / "s"), "--images", "8", "--seed", "3"]) == 0
    images = load_release(tmp_path / "s").images
    assert len(images) == 8
    with open(tmp_path / "s" / "identification" / "annotated_normal_natural_stranged.csv", encoding="utf-8") as handle:
        pairs = list(csv.DictReader(handle))
    assert [p["strange_image"] for p in pairs] == [f"{i.image_id}.png" for i in images]
    from PIL import Image

    from abduct_whoops.synth import COLORS, OBJECTS

    for image in images:  # the weird picture holds the odd color, its normal counterpart the natural one
        name = image.question_answering_pairs[1][1]
        color = image.question_answering_pairs[0][1]
        assert color != OBJECTS[name][1] and color in image.selected_caption
        with Image.open(tmp_path / "s" / "identification" / f"normal_{image.image_id}.png") as normal, \
                Image.open(image.path) as weird:
            normal_pixels = {tuple(p) for p in np.asarray(normal.convert("RGB")).reshape(-1, 3).tolist()}
            weird_pixels = {tuple(p) for p in np.asarray(weird.convert("RGB")).reshape(-1, 3).tolist()}
        assert COLORS[OBJECTS[name][1]] in normal_pixels and COLORS[color] in weird_pixels
        assert COLORS[color] not in normal_pixels


def test_captions_tokenised_once_score_as_the_metrics_tokenising_each_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """BLEU and CIDEr share one PTB tokenisation per group (two Java calls, not four): the
    values and the per-image data equal those of each metric tokenising the raw text itself,
    on text where a sentence's neighbours change its tokens (a lone letter before a period)."""
    from abduct_whoops import scoring

    records = [
        {"image_id": "a", "prediction": "The plan d.", "references": ["plan d.", "A plan, d. :)"]},
        {"image_id": "b", "prediction": "Then it rained, U.S. style", "references": ["then it rained", "Rain d."]},
        {"image_id": "c", "prediction": "x d.", "references": ["Here d.", "the \"whale\" isn't blue"]},
    ]
    once = scoring.caption_scores(scoring.registry_metric(), records)
    monkeypatch.setattr(scoring, "_ptb_once", lambda predictions, references: (predictions, references))
    each = scoring.caption_scores(scoring.registry_metric(), records)
    assert once[0] == each[0] and 0 < once[0]["bleu_4"]
    assert once[1] == each[1]
