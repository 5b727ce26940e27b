"""Intervals: hand-computed cases, scipy.stats on the same data (the bootstrap to 1e-9), and an
independent bootstrap from predictions.jsonl alone against what results.json reports. (The paired
tests of ``abduct compare`` are abduct-report's, tested there.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from abduct import PluginError, UnitScores
from abduct._cli import main
from abduct._registry.registry import Registry
from abduct._stats.aggregates import value
from abduct._stats.resampling import interval, rng_for
from abduct._stats.unitsfile import checked
from toy_plugin import write_toy_data


def _means(values: list[float], unit: str = "item") -> UnitScores:
    return UnitScores.means(unit, {f"u{i}": v for i, v in enumerate(values)})


# -- hand-computed cases --------------------------------------------------------------------
def test_two_units_give_the_whole_range() -> None:
    # resampling {0, 1} twice: mean 0 with chance 1/4, 1/2 with 1/2, 1 with 1/4: the 2.5% and 97.5%
    # points of 1,000 resamples are 0 and 100 (a miss of either tail has chance about 1e-125)
    found = interval(_means([0.0, 1.0]), 1000, 0, "accuracy")
    assert found is not None and (found["low"], found["high"]) == (0.0, 100.0)
    assert found["unit"] == "item" and found["units"] == 2 and found["level"] == 0.95


def test_bleu_from_statistics_by_hand() -> None:
    # one hypothesis of 4 tokens against a closest reference of 5: precisions 3/4, 1/3, 0+, 0+
    row = [4, 5, 4, 3, 2, 1, 3, 1, 0, 0]
    scores = UnitScores.corpus("sentence", "bleu-2", {"s": row})
    penalty = np.exp(1 - 5 / 4)
    assert value(scores) == pytest.approx(np.sqrt(3 / 4 * 1 / 3) * penalty, rel=1e-6)


# -- against scipy.stats on the same data ---------------------------------------------------
def test_interval_is_scipy_bootstrap_on_the_values() -> None:
    values = np.random.default_rng(1).integers(0, 2, 300).astype(float)
    found = interval(_means(list(values)), 1000, 7, "accuracy")
    ref = stats.bootstrap((100 * values,), np.mean, n_resamples=1000, method="percentile",
                          rng=rng_for(7, "accuracy"))
    assert found is not None
    assert (found["low"], found["high"]) == pytest.approx(tuple(ref.confidence_interval), abs=1e-9)


# -- declarations ---------------------------------------------------------------------------
def test_units_that_do_not_give_the_reported_value_are_refused() -> None:
    units = {"accuracy": _means([1.0, 0.0])}
    assert checked(units, {"accuracy": 50.0}, "task 't'") is units
    with pytest.raises(PluginError, match="give 50, not the reported 60"):
        checked(units, {"accuracy": 60.0}, "task 't'")
    with pytest.raises(PluginError, match="not a reported metric"):
        checked(units, {"n": 2.0}, "task 't'")
    with pytest.raises(PluginError, match="unknown aggregate"):
        checked({"accuracy": UnitScores("item", ("a",), (1.0,), "median")}, {"accuracy": 1.0}, "task 't'")


# -- end to end: results.json against predictions.jsonl alone ---------------------------------
def _eval(data: Path, out: Path, model: str, *extra: str) -> Path:
    assert main(["eval", "toy-choice", "--model", model, "--data", str(data), "--out", str(out), "--quiet",
                 *extra]) == 0
    return out


def _correct(run: Path) -> dict[str, float]:
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    return {r["id"]: float(r["label"] == int(np.argmax(r["scores"]))) for r in rows}


def test_results_agree_with_an_independent_bootstrap(toy_registry: Registry, tmp_path: Path) -> None:
    first = _eval(write_toy_data(tmp_path / "toy", items=80), tmp_path / "a", "random")
    a = _correct(first)
    results = json.loads((first / "results.json").read_text())
    assert results["metrics"]["accuracy"] == pytest.approx(100 * np.mean(list(a.values())))

    # a plain percentile bootstrap, 20,000 resamples: the endpoints agree to a Monte Carlo error
    rng = np.random.default_rng(123)
    values = np.array(list(a.values()))
    means = 100 * values[rng.integers(0, len(values), (20000, len(values)))].mean(axis=1)
    ci = results["intervals"]["accuracy"]
    assert ci["unit"] == "question" and ci["resamples"] == 1000 and ci["method"] == "percentile bootstrap"
    assert ci["low"] == pytest.approx(np.percentile(means, 2.5), abs=2.6)
    assert ci["high"] == pytest.approx(np.percentile(means, 97.5), abs=2.6)
    assert "accuracy" in (first / "report.md").read_text() and f"[{ci['low']:.4f}".rstrip("0") in \
        (first / "report.md").read_text().replace(".0000", "")


def test_no_intervals_with_zero_resamples(toy_registry: Registry, toy_data: Path, tmp_path: Path) -> None:
    run = _eval(toy_data, tmp_path / "a", "random", "--ci-resamples", "0")
    assert json.loads((run / "results.json").read_text())["intervals"] == {}
    assert "accuracy" in json.loads((run / "units.json").read_text())  # compare still pairs the units


def test_a_ratio_resamples_whole_units() -> None:
    # image a: 2 of 3 comparisons won, image b: 0 of 1: pooled 50%, not the mean of 67% and 0%
    scores = UnitScores.ratio("image", {"a": (2, 3), "b": (0, 1)})
    assert value(scores) == pytest.approx(50.0)
    found = interval(scores, 1000, 0, "specificity")
    # resamples: {a, a} 2/3, {a, b} 1/2, {b, b} 0: the 2.5% and 97.5% points are 0 and 66.7
    assert found is not None and (found["low"], found["high"]) == pytest.approx((0.0, 200 / 3))


def test_pooled_sums_each_units_samples_by_hand() -> None:
    # events a1, a2 of example a and b1 of b: mean per event (1 + 0 + 1) / 3, resampled by example
    rows = {"a1": (1.0, 1.0), "a2": (0.0, 1.0), "b1": (1.0, 1.0)}
    scores = UnitScores.pooled("example", "ratio", rows, {"a1": "a", "a2": "a", "b1": "b"}, 100.0, "a note")
    assert scores.ids == ("a", "b") and scores.values == ((1.0, 2.0), (1.0, 1.0))
    assert value(scores) == pytest.approx(200 / 3)
    found = interval(scores, 1000, 0, "m")
    # resamples {a, a} 50, {a, b} 66.7, {b, b} 100: the 2.5% and 97.5% points are 50 and 100
    assert found is not None and (found["low"], found["high"]) == pytest.approx((50.0, 100.0))
    assert found["method"] == "percentile bootstrap; a note"


def test_breakdown_keeps_each_groups_units() -> None:
    scores = UnitScores.means("instance", {"x": 1.0, "y": 0.0, "z": 1.0, "w": 1.0})
    found = scores.breakdown("accuracy", {"by_kind": {"x": "p", "y": "p", "z": "q", "gone": "q"}})
    assert set(found) == {"by_kind.p.accuracy", "by_kind.q.accuracy"}
    assert value(found["by_kind.p.accuracy"]) == 50.0 and found["by_kind.q.accuracy"].ids == ("z",)
    assert found["by_kind.p.accuracy"].unit == "instance" and found["by_kind.p.accuracy"].scale == 100.0


def test_a_note_survives_units_json(tmp_path: Path) -> None:
    from abduct._stats.unitsfile import decode, encode

    scores = UnitScores.means("image", {"a": 0.5, "b": 0.25}, 100.0, "fixed document frequencies")
    again = decode(json.loads(json.dumps(encode({"cider": scores}))), tmp_path / "units.json")["cider"]
    assert again == scores
    assert decode(json.loads(json.dumps(encode({"c": _means([1.0])}))), tmp_path / "units.json")["c"].note == ""
