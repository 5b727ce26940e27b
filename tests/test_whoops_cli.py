"""abduct-whoops installed with the rest: every WHOOPS! task through `abduct eval` on the
synthetic corpus, with clip:tiny, a tiny VLM and a fake OpenAI-compatible server as the
model and as the LLM judge (`--judge openai:fake,base_url=...`), then the leaderboard file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import abduct, abduct_process


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("whoops") / "data"
    done = abduct("whoops", "synth", "--out", str(out), "--images", "20")
    assert done.returncode == 0, done.stderr
    return out


def _eval(corpus: Path, out: Path, task: str, model: str, *extra: str) -> dict[str, Any]:
    done = abduct("eval", task, "--model", model, "--data", str(corpus), "--out", str(out), "--json", "--quiet",
                  "--no-cache", *extra)
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout)
    return results


@pytest.mark.parametrize("task, metric", [("whoops-matching", "specificity"),
                                          ("whoops-identification,answer=score", "accuracy")])
def test_clip_scores_matching_and_identification(corpus: Path, tmp_path: Path, task: str, metric: str) -> None:
    results = _eval(corpus, tmp_path, task, "clip:tiny,workers=0")
    assert 0.0 <= results["metrics"][metric] <= 100.0
    assert set(results["details"]["by_category"]) == {"Astronomy", "Biology", "Everyday Knowledge", "Zoology"}
    assert len(results["details"]["per_fold"]) == 5 and f"{metric}_fold_std" in results["metrics"]


def test_caption_retrieval_with_clip(corpus: Path, tmp_path: Path) -> None:
    results = _eval(corpus, tmp_path, "whoops-captioning", 'retrieve:"clip:tiny,workers=0"', "--limit", "10")
    records = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert results["metrics"]["n_images"] == 10
    from abduct_whoops import load_release, make_folds

    images = load_release(corpus).by_id()
    folds = make_folds(list(images))
    for r in records:  # a crowd caption of an image outside the image's fold part
        part = next(set(folds.part(k, "test")) for k in range(5) if r["image_id"] in folds.part(k, "test"))
        assert r["prediction"] in {c for i, image in images.items() if i not in part for c in image.crowd_captions}


def test_tiny_vlm_captions_and_the_leaderboard_file_scores_the_same(corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("abduct_vlm")
    results = _eval(corpus, tmp_path / "run", "whoops-captioning", "vlm:tiny,max_new_tokens=6")
    assert results["metrics"]["n_images"] == 20
    done = abduct("whoops", "submit", "--run", str(tmp_path / "run"), "--out", str(tmp_path / "board.csv"))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    (tmp_path / "p.json").write_text(json.dumps({r["image_id"]: r["prediction"] for r in records}))
    done = abduct("score", "whoops-captioning", "--predictions", str(tmp_path / "p.json"), "--answer-key",
                  str(corpus / "whoops_dataset.csv"), "--json")
    assert done.returncode == 0, done.stderr
    scored = json.loads(done.stdout)
    assert (scored["bleu_4"], scored["cider"]) == (results["metrics"]["bleu_4"], results["metrics"]["cider"])


def test_served_model_answers_vqa_and_identification(corpus: Path, tmp_path: Path) -> None:
    testing = pytest.importorskip("abduct_vlm.testing")

    def reply(body: dict[str, Any]) -> str:
        text = testing.request_text(body)
        return "normal" if "weird or normal" in text else "blue"

    with testing.FakeOpenAIServer(reply=reply) as server:
        model = f"openai:fake,base_url={server.base_url}"
        vqa = _eval(corpus, tmp_path / "vqa", "whoops-vqa", model)
        ident = _eval(corpus, tmp_path / "ident", "whoops-identification", model)
    records = [json.loads(line) for line in (tmp_path / "vqa" / "predictions.jsonl").read_text().splitlines()]
    assert vqa["metrics"]["exact_match"] == 100 * sum(r["answer"] == "blue" for r in records) / len(records) > 0
    assert ident["metrics"]["accuracy"] == 50.0 and ident["metrics"]["normal_accuracy"] == 100.0
    assert len(server.requests) == len(records) + 40


def test_explanation_judged_by_a_served_judge(corpus: Path, tmp_path: Path) -> None:
    testing = pytest.importorskip("abduct_vlm.testing")
    with testing.FakeOpenAIServer() as server:
        spec = f"openai:fake,base_url={server.base_url}"
        results = _eval(corpus, tmp_path, "whoops-explanation", spec, "--judge", spec)
        asked = [testing.request_text(body) for body in server.requests]
    records = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    judged = [r["judge"] for r in records]
    assert None not in judged and results["judge"]["judged"] == 20 and results["judge"]["parse_failures"] == 0
    assert results["metrics"]["judge_equivalent"] == 100 * sum(judged) / 20
    prompts = [text for text in asked if "[reference explanations " in text]
    assert len(prompts) == 20 and all("1. " in p and "6. " in p for p in prompts)  # designer + 5 crowd


def test_explanation_without_judge_is_one_line(corpus: Path, tmp_path: Path) -> None:
    done = abduct_process("eval", "whoops-explanation", "--model", "random", "--data", str(corpus), "--out",
                          str(tmp_path))  # a real process: the exit status and all of stderr
    assert done.returncode == 2 and "pass --judge SPEC" in done.stderr and "Traceback" not in done.stderr


def test_dataset_options_change_what_the_tasks_read(corpus: Path, tmp_path: Path) -> None:
    """``--dataset whoops,folds=FILE``: the folds of the file (another seed) make the per-fold
    tables and the pools offered to ``random``, so other predictions; ``abduct check`` reads the
    same options and names a folds file that does not fit the data."""
    done = abduct("whoops", "folds", "--data", str(corpus), "--out", str(tmp_path / "f.json"), "--seed", "7")
    assert done.returncode == 0, done.stderr
    default = _eval(corpus, tmp_path / "default", "whoops-vqa", "random")
    other = _eval(corpus, tmp_path / "other", "whoops-vqa", "random", "--dataset", f"whoops,folds={tmp_path / 'f.json'}")
    assert other["details"]["per_fold"] != default["details"]["per_fold"]
    read = [(tmp_path / run / "predictions.jsonl").read_text() for run in ("default", "other")]
    assert read[0] != read[1]
    assert abduct("check", "whoops-vqa", "--data", str(corpus), "--dataset",
                  f"whoops,folds={tmp_path / 'f.json'}").returncode == 0
    (tmp_path / "bad.json").write_text(json.dumps({"folds": [{"train": [], "val": [], "test": []}] * 5}))
    done = abduct("check", "whoops-vqa", "--data", str(corpus), "--dataset", f"whoops,folds={tmp_path / 'bad.json'}")
    assert done.returncode == 1 and "the test parts must cover every image once" in done.stdout + done.stderr
    done = abduct("check", "whoops-identification", "--data", str(corpus), "--dataset",
                  "whoops-identification,normal_images=" + str(tmp_path))
    assert done.returncode != 0 and "no identification file" in done.stdout + done.stderr
