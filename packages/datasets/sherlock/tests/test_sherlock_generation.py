"""``sherlock-generation`` (abduct's own task): the inference from (image, region, clue), scored
against the annotated inference with the caption metrics; the chance row picks training
inferences. The metrics come with abduct-metrics (optional): these tests replace them with
exact match unless it is installed, and then check its figures are reported."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from sherlock_test_util import registry_with_test_models

import abduct_sherlock.tasks as tasks
from abduct import AbductError, Generated, MetricResult
from abduct.host import EvalConfig, get_registry, run_evaluation
from abduct.kit import install_command
from abduct_sherlock import load_instances
from abduct_sherlock.records import OPTIONAL_INPUTS

HAVE_METRICS = importlib.util.find_spec("abduct_metrics") is not None


def _eval(data: Path, out: Path, model: str = "random", task: str = "sherlock-generation", **kw: Any) -> dict[str, Any]:
    return run_evaluation(EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True, use_cache=False,
                                     **kw), registry_with_test_models())


@pytest.fixture
def exact_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    """The caption metrics replaced by the share of exact matches (no abduct-metrics, no Java)."""

    def fake(run: Any, records: Sequence[Generated], metrics: Mapping[str, Any],
             keep: dict[str, MetricResult] | None = None) -> dict[str, float]:
        each = {r.id: float(r.prediction in r.references) for r in records}
        hits = sum(each.values()) / max(len(records), 1)
        if keep is not None:
            keep.update({name: MetricResult({key: hits}, {i: {key: v} for i, v in each.items()})
                         for name, key in (("cider", "cider"), ("rouge-l", "rouge_l"))})
        return {"bleu.bleu_4": hits, "cider": hits, "rouge-l": hits, "meteor": hits}

    monkeypatch.setattr(tasks, "score_generations", fake)


def test_random_picks_training_inferences_without_the_clue(corpus: Path, tmp_path: Path, exact_metrics: None) -> None:
    result = _eval(corpus, tmp_path / "a", seed=1)
    val = load_instances(corpus, "val")
    train = {inst.inference for inst in load_instances(corpus, "train")}
    assert result["metrics"]["instances"] == len(val)
    assert set(result["metrics"]) == {"bleu4", "cider", "rouge_l", "meteor", "instances"}
    assert set(result["metric_info"]) == set(result["metrics"]) and "undeclared_metrics" not in result
    assert result["metric_info"]["cider"] == {"better": "higher", "range": [0.0, 1000.0], "chance": None}
    assert result["inputs"]["ignored"] == ["context"]
    rows = [json.loads(line) for line in (tmp_path / "a" / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == len(val) and {r["prediction"] for r in rows} <= train
    assert _eval(corpus, tmp_path / "b", seed=1)["metrics"] == result["metrics"]


def test_a_text_only_generator_gets_the_clue(corpus: Path, tmp_path: Path, exact_metrics: None) -> None:
    _eval(corpus, tmp_path / "o", model="clue-echo", limit=5)
    rows = [json.loads(line) for line in (tmp_path / "o" / "predictions.jsonl").read_text().splitlines()]
    clues = {inst.instance_id: (inst.clue, inst.inference) for inst in load_instances(corpus, "val")}
    assert len(rows) == 5
    for row in rows:
        assert (row["prediction"], row["references"]) == (clues[row["id"]][0], [clues[row["id"]][1]])


def test_options_and_refusals(corpus: Path, tmp_path: Path) -> None:
    task = get_registry().create("task", "sherlock-generation")
    assert task.optional_inputs == OPTIONAL_INPUTS  # type: ignore[attr-defined]
    assert set(task.metrics()) == {"bleu", "cider", "rouge-l", "meteor"}  # type: ignore[attr-defined]
    with_bert = get_registry().create("task", f"sherlock-generation,bertscore_model={tmp_path},bertscore_layers=17")
    assert with_bert.metrics()["bertscore"] == {"model": str(tmp_path), "num_layers": 17}  # type: ignore[attr-defined]
    with pytest.raises(AbductError, match="is not a directory"):
        get_registry().create("task", f"sherlock-generation,bertscore_model={tmp_path / 'none'}")
    with pytest.raises(AbductError, match="no official format"):
        task.score_files(tmp_path / "p.json", tmp_path / "k.json")
    with pytest.raises(AbductError, match="does not generate"):
        _eval(corpus, tmp_path / "c", model="clue-reader")


@pytest.mark.skipif(not HAVE_METRICS, reason="abduct-metrics is not installed")
def test_caption_metrics_are_reported(corpus: Path, tmp_path: Path) -> None:
    results = _eval(corpus, tmp_path / "o", limit=20)
    metrics, intervals = results["metrics"], results["intervals"]
    assert all(0.0 <= metrics[k] <= 100.0 for k in ("bleu4", "rouge_l", "meteor")) and 0.0 <= metrics["cider"] <= 1000.0
    # BLEU-4 from the instances' n-gram statistics, CIDEr-D with the full set's document
    # frequencies; METEOR's corpus value is not a mean of sentence scores: no interval
    assert set(intervals) == {"bleu4", "cider", "rouge_l"}
    assert all(i["unit"] == "instance" and i["units"] == 20 for i in intervals.values())
    assert "document frequencies" in intervals["cider"]["method"]


@pytest.mark.skipif(HAVE_METRICS, reason="abduct-metrics is installed")
def test_without_abduct_metrics_the_message_says_what_to_install(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(AbductError, match=re.escape(install_command("abduct-metrics"))):
        _eval(corpus, tmp_path / "o", limit=4)
