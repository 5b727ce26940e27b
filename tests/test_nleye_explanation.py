"""abduct-nleye with abduct-metrics: `nleye-explanation` with `random` (the chance row, on the
caption metrics that need no weights), with a local BERTScore model and a local BEM model
(tiny random BERTs built here, no downloads), and the task contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abduct import AbductError
from abduct.host import EvalConfig, build_registry, run_evaluation
from abduct_metrics.testing import WORDS, build_tiny_bert
from abduct_nleye import load_csv
from abduct_nleye.synth import COLORS, synthesize
from abduct_testing import TaskContract
from conftest import abduct

SYNTH_WORDS = ("a", "scene", "keeps", "its", "color", "stays", *COLORS)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthesize(tmp_path_factory.mktemp("nleye-x") / "data", samples=24, seed=0)


def _eval(corpus: Path, out: Path, task: str, model: str = "random", **kw: Any) -> dict[str, Any]:
    config = EvalConfig(task=task, model=model, data_dir=corpus, out_dir=out, quiet=True, use_cache=False, **kw)
    return run_evaluation(config, build_registry())


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


class TestExplanationContract(TaskContract):
    task_name = "nleye-explanation"

    @pytest.fixture(autouse=True)
    def _shared(self, corpus: Path) -> None:
        self.corpus = corpus

    def make_data(self, tmp_path: Path) -> Path:
        return self.corpus


def test_random_is_scored_with_the_caption_metrics_fallback(corpus: Path, tmp_path: Path) -> None:
    done = abduct("eval", "nleye-explanation", "--model", "random", "--data", str(corpus), "--out", str(tmp_path),
                  "--json", "--quiet", "--no-cache")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    metrics, details = results["metrics"], results["details"]
    assert metrics["metrics_ran"] == ["bleu", "rouge-l", "cider"] and details["fallback"] is True
    assert "no bertscore_model or bem_model" in details["note"]
    assert {"bleu_4", "rouge_l", "cider"} <= set(metrics) and metrics["n"] == 24
    assert set(metrics["by_reasoning_category"]) == {"physical", "functional", "logical", "emotional", "cultural",
                                                     "social"}
    records = _records(tmp_path)
    golds = {s.sample_id: s.explanation for s in load_csv(corpus / "test_set.csv")}
    pool = set(golds.values())
    assert all(r["prediction"] in pool and r["references"] == [golds[r["id"]]] for r in records)
    for r in records:  # a pick equal to the gold scores ROUGE-L 100 (x100)
        assert (r["metrics"]["rouge_l"] == pytest.approx(100.0)) == (r["prediction"] == r["references"][0])
    # the table is the mean of the per-sample values
    physical = [r["metrics"]["rouge_l"] for r, s in zip(records, load_csv(corpus / "test_set.csv"))
                if s.categories["reasoning_category"] == "physical"]
    assert metrics["by_reasoning_category"]["physical"]["rouge_l"] == pytest.approx(sum(physical) / len(physical))
    assert metrics["rouge_l"] == pytest.approx(sum(r["metrics"]["rouge_l"] for r in records) / len(records))
    # intervals by sample: corpus BLEU from n-gram statistics, the rest (and every table cell)
    # the per-sample mean; a table cell's interval resamples its own group's samples
    intervals = results["intervals"]
    assert {"bleu_1", "bleu_4", "rouge_l", "cider", "by_reasoning_category.physical.rouge_l"} <= set(intervals)
    assert intervals["by_reasoning_category.physical.rouge_l"]["units"] == len(physical)
    assert all(i["unit"] == "sample" for i in intervals.values()) and intervals["bleu_4"]["units"] == 24
    assert "document frequencies" in intervals["cider"]["method"]


def test_bertscore_and_bem_from_local_directories(corpus: Path, tmp_path: Path) -> None:
    bert = build_tiny_bert(tmp_path / "bert", words=(*WORDS, *SYNTH_WORDS), seed=1)
    bem = build_tiny_bert(tmp_path / "bem", words=(*WORDS, *SYNTH_WORDS), classifier=True, type_vocab_size=3, seed=2)
    task = f"nleye-explanation,bertscore_model={bert},bertscore_layers=1,bem_model={bem}"
    result = _eval(corpus, tmp_path / "run", task, limit=12)
    metrics = result["metrics"]
    assert metrics["metrics_ran"] == ["bertscore", "bem"] and result["details"]["fallback"] is False
    assert "bleu_4" not in metrics and 0.0 <= metrics["bem"] <= 100.0
    assert "_L1_" in result["details"]["metric_info"]["bertscore"]["hash"]
    records = _records(tmp_path / "run")
    # the same values as the metric computed directly on the predictions
    direct = build_registry().create("metric", f"bertscore,model={bert},num_layers=1").compute(
        {r["id"]: r["prediction"] for r in records}, {r["id"]: r["references"] for r in records})
    assert metrics["bertscore_f1"] == pytest.approx(direct.corpus["bertscore_f1"])
    for r in records:
        assert r["metrics"]["bertscore_f1"] == pytest.approx(direct.per_sample[r["id"]]["bertscore_f1"])
        if r["prediction"] == r["references"][0]:  # exact match before BEM
            assert r["metrics"]["bem"] == 100.0  # x100
    assert set(metrics["by_time_direction"]["forward"]) == {"bertscore_precision", "bertscore_recall",
                                                            "bertscore_f1", "bem", "n"}


def test_bertscore_needs_a_layer_for_an_unknown_model(corpus: Path, tmp_path: Path) -> None:
    bert = build_tiny_bert(tmp_path / "bert", seed=1)
    with pytest.raises(AbductError, match="num_layers is required"):  # before anything is generated
        _eval(corpus, tmp_path / "o", f"nleye-explanation,bertscore_model={bert}")
    assert not (tmp_path / "o" / "predictions.jsonl").exists()
