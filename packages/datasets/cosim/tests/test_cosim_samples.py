"""samples.html of a cosim run: the task's view (image, question, change, the four responses
with scores and ranks, the gold, the change type), and the page in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct_testing import main
from abduct_testing.browser import browser_or_skip, page_views, rendered_text, samples_browser, view


@pytest.fixture(scope="module")
def run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cosim-samples") / "run"
    assert main(["eval", "cosim", "--model", "random", "--data", str(corpus), "--out", str(out), "--quiet"]) == 0
    return out


def test_view_shows_the_responses_with_scores_ranks_and_gold(run: Path, corpus: Path) -> None:
    raw = json.loads((corpus / "val.json").read_text())
    records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    views = page_views(run)
    assert len(views) == len(records) == len(raw)
    for shown, record, source in zip(views, records, raw):
        texts = {t["label"].split(" · ")[0]: t for t in shown["texts"]}
        assert texts["question"]["text"] == source["question"] and texts["change"]["text"] == source["change"]
        responses = [texts[f"response {k}"] for k in range(1, 5)]
        assert [r["text"] for r in responses] == source["answer_choices"]
        gold = [r for r in responses if r["label"].endswith("· gold")]
        assert gold == [responses[source["answer_label"]]]
        picked = [r for r in responses if "· rank 1" in r["label"]]
        assert picked == [responses[record["choice"]]]  # rank 1 is the model's choice
        assert shown["correct"] is record["correct"] and shown["category"] == source["type"]
        assert (shown["margin"] > 0) is record["correct"]
        assert shown["images"][0]["thumb"] and shown["images"][0]["path"].endswith(source["img_fn"])


def test_page_in_chromium_shows_the_rich_view(run: Path) -> None:
    chromium = browser_or_skip()
    with samples_browser(chromium) as tab:
        shown = view(tab, run / "samples.html", "only=wrong")
        text = rendered_text(tab)
    wrong = sum(1 for v in page_views(run) if v["correct"] is False)
    assert shown.count == wrong > 0 and shown.images == len(shown.ids) and shown.broken_images == []
    assert "response 4" in text and "· gold" in text and "initial response" in text
    assert shown.console_errors == [] and shown.outside_requests == []
