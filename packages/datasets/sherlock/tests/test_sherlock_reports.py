"""Sherlock's report.html (per-chunk values, rank histograms, examples with the clue's region
drawn, all inlined), its published rows in `abduct compare`, and samples.html of each task."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from abduct.host import get_registry
from abduct_report.comparison import published_rows
from abduct_sherlock.keys import ComparisonKey
from abduct_sherlock.loader import load_instances
from abduct_testing import main
from abduct_testing.browser import browser_or_skip, page_views, samples_browser
from abduct_testing.browser import view as view_page


def test_retrieval_report_has_plots_and_examples(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["eval", "sherlock-retrieval", "--model", "random", "--data", str(corpus), "--out", str(out),
                 "--quiet"]) == 0
    text = (out / "report.html").read_text()
    images = re.findall(r'<img alt="([^"]*)"[^>]* src="(data:image/(?:png|jpeg);base64,[^"]+)"', text)
    assert len(images) == len(re.findall(r"<img ", text))  # every image inlined
    alts = [alt for alt, _ in images]  # the plots (narrow ones first, so their order follows their widths), then examples
    assert sorted(alts[:4]) == ["histogram of im2txt_rank", "histogram of txt2im_rank", "intervals", "per_chunk"]
    assert alts[4:] == ["example"] * len(images[4:]) and len(images) > 4
    results = json.loads((out / "results.json").read_text())
    examples = results["details"]["examples"]
    example = examples[0]
    assert example["boxes"] and len(example["lines"]) == 4 and example["title"].startswith("clue: ")
    assert all(e["lines"][0].startswith("gold: ") for e in examples)  # the gold inference, always
    assert {e["correct"] for e in examples} == {True, False}  # right and wrong ones, marked so
    assert "✓ right" in text and "✗ wrong" in text


def test_predictions_name_the_top_inferences_by_text(corpus: Path, tmp_path: Path) -> None:
    from abduct_sherlock.loader import load_instances

    out = tmp_path / "run"
    assert main(["eval", "sherlock-retrieval", "--model", "random", "--data", str(corpus), "--out", str(out),
                 "--quiet"]) == 0
    inference = {i.instance_id: i.inference for i in load_instances(corpus, "val")}
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    ranked = [r for r in records if "top_inferences" in r]
    assert ranked and all(len(r["top_inferences"]) == 3 for r in ranked)
    for r in ranked:
        assert r["top_inferences"] == [inference[i] for i in r["top_inference_ids"]]


@pytest.mark.parametrize(("task", "plots"), [("sherlock-localization", ["by_boxes", "histogram of gt_accuracy"]),
                                             ("sherlock-comparison", ["histogram of accuracy"])])
def test_localization_and_comparison_reports_have_plots_and_examples(corpus: Path, tmp_path: Path, task: str,
                                                                     plots: list[str]) -> None:
    out = tmp_path / task
    assert main(["eval", task, "--model", "random", "--data", str(corpus), "--out", str(out), "--quiet"]) == 0
    text = (out / "report.html").read_text()
    alts = re.findall(r'<img alt="([^"]*)"', text)
    assert set(plots) <= set(alts) and "example" in alts
    examples = json.loads((out / "results.json").read_text())["details"]["examples"]
    assert examples and all(e["image"] and e["boxes"] and e["lines"] for e in examples)
    if task == "sherlock-localization":  # each box numbered, with the inference assigned to it
        assert all(len(e["lines"]) <= len(e["boxes"]) and e["lines"][0].startswith("box 1 ") for e in examples)
    else:  # the candidates in the model's order, with the annotators' ratings
        assert all(" · annotators " in line for e in examples for line in e["lines"])


def test_published_rows_carry_their_citation() -> None:
    registry = get_registry()
    for task in ("sherlock-retrieval", "sherlock-localization", "sherlock-comparison"):
        rows = published_rows(task, registry)
        assert rows and all(r.citation and "ECCV 2022" in r.citation for r in rows)
    clip = next(r for r in published_rows("sherlock-retrieval", registry) if r.model == "CLIP ViT-B/16")
    assert clip.metrics == {"im2txt": 19.9, "txt2im": 21.6, "p_at_1": 30.6} and clip.split == "test"


def test_compare_shows_runs_beside_the_paper(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for model in ("random", "constant"):
        assert main(["eval", "sherlock-retrieval", "--model", model, "--data", str(corpus),
                     "--out", str(tmp_path / model), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "random"), str(tmp_path / "constant"),
                 "--html", str(tmp_path / "cmp.html")]) == 0
    out = capsys.readouterr().out
    assert "CLIP RN50x64 + multitask clue learning [paper]" in out and "Hessel" in out
    page = (tmp_path / "cmp.html").read_text()
    assert "(paper" in page and all(src.startswith("data:image/png;base64,")
                                    for src in re.findall(r'<img [^>]*src="([^"]+)"', page))


def test_samples_page_shows_the_region_clue_gold_and_top_inferences(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "samples-run"
    assert main(["eval", "sherlock-retrieval", "--model", "random", "--data", str(corpus), "--out", str(out),
                 "--quiet"]) == 0
    found = re.search(r'id="samples-data">(.*?)</script>', (out / "samples.html").read_text())
    assert found is not None
    views = json.loads(found.group(1))
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [v["id"] for v in views] == [r["instance_id"] for r in records]
    assert [v["correct"] for v in views] == [r["im2txt_rank"] == 1.0 for r in records]
    first = views[0]
    assert first["images"][0]["boxes"] and first["images"][0]["thumb"].startswith("samples/")
    labels = [t["label"] for t in first["texts"]]
    assert labels[:2] == ["clue", "gold inference"] and len(labels) == 5  # and the model's top three, as text
    assert (out / first["images"][0]["thumb"]).is_file()


def test_samples_page_of_localization_draws_every_box_with_its_assignment(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "loc"
    assert main(["eval", "sherlock-localization", "--model", "random", "--data", str(corpus), "--out", str(out),
                 "--quiet"]) == 0
    pairs = {(inst.clue, inst.inference) for inst in load_instances(corpus, "val")}
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    views = page_views(out)
    assert len(views) == len(records) and any(v["correct"] is False for v in views)
    for view, record in zip(views, records):
        assigned = record["assignment"]
        assert sorted(assigned) == list(range(record["boxes"]))  # one-to-one
        assert record["gt_accuracy"] == sum(c == r for r, c in enumerate(assigned)) / len(assigned)
        labels = {box[4].split(" ")[0] for box in view["images"][0]["boxes"]}
        assert labels == {f"{r + 1}→{c + 1}" for r, c in enumerate(assigned)} and view["images"][0]["size"]
        texts = [t["text"] for t in view["texts"]]
        for r, c in enumerate(assigned):  # a box's clue with the inference it got: a true pair where it is its own
            assert ((texts[2 * r], texts[2 * r + 1]) in pairs) is (r == c)
        assert view["correct"] is (record["gt_accuracy"] == 1.0)
    chromium = browser_or_skip()
    with samples_browser(chromium) as tab:
        shown = view_page(tab, out / "samples.html", "only=wrong")
        drawn = tab.page.locator(".box").count()
    assert shown.count == sum(v["correct"] is False for v in views) and shown.broken_images == []
    assert drawn == sum(len(v["images"][0]["boxes"]) for v in views if v["id"] in shown.ids) > 0
    assert shown.console_errors == [] and shown.outside_requests == []


def test_samples_page_of_comparison_scores_candidates_beside_the_ratings(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    assert main(["eval", "sherlock-comparison", "--model", "random", "--data", str(corpus), "--out", str(out),
                 "--quiet"]) == 0
    key = {s.input_iid: s for s in ComparisonKey.read(corpus / "val_comparison" / "val_comparison_answer_key.json").sources}
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    for view, record in zip(page_views(out), records):
        source = key[record["source"]]
        assert view["id"] == record["source"] and view["texts"][0]["label"] == "clue" and view["images"][0]["boxes"]
        candidates = view["texts"][1:]
        assert len(candidates) == len(source.candidates) == len(record["scores"])
        for k, (text, (_, a, b), score) in enumerate(zip(candidates, source.candidates, record["scores"])):
            assert text["label"].startswith(f"candidate {k + 1} · annotators {a:g}, {b:g} · score {score:.4g}")
        best = max(range(len(record["scores"])), key=lambda i: (record["scores"][i], -i))
        assert "rank 1" in candidates[best]["label"] and view["score"] == round(100 * record["accuracy"], 2)  # the report's x100
