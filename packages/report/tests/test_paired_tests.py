"""Paired tests and Holm's correction: hand-computed cases, scipy.stats on the same data (the
paired bootstrap to 1e-9), and an independent sign-flip test from predictions.jsonl alone
against what ``abduct compare`` reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from abduct import UnitScores
from abduct.host import Registry, interval_rng, main
from abduct_report.paired import seed_groups
from abduct_report.paired_tests import holm, paired_test
from abduct_testing.toy import write_toy_data


def _means(values: list[float], unit: str = "item") -> UnitScores:
    return UnitScores.means(unit, {f"u{i}": v for i, v in enumerate(values)})


# -- hand-computed cases --------------------------------------------------------------------
def test_holm_by_hand() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3 x 0.01, max(0.03, 2 x 0.03), max(0.06, 1 x 0.04)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_sign_flip_by_hand() -> None:
    # differences (1, 1, 1): of the 2^3 sign flips only all-plus and all-minus reach |mean| >= 1
    first, other = _means([0.0, 0.0, 0.0]), _means([1.0, 1.0, 1.0])
    test = paired_test(first, other, 1000, 0, "accuracy")
    assert test is not None and test["p_value"] == pytest.approx(2 / 8) and test["difference"] == 100.0
    assert test["test"] == "sign-flip permutation"


def test_identical_runs_differ_by_nothing() -> None:
    for scores in (_means([1.0, 0.0, 1.0, 1.0, 0.0] * 20),
                   UnitScores.corpus("sentence", "bleu-4", {i: [5, 6, 5, 4, 3, 2, 3, i % 3, 1, 0] for i in range(30)})):
        test = paired_test(scores, scores, 500, 3, "m")
        assert test is not None
        assert (test["difference"], test["low"], test["high"], test["p_value"]) == (0.0, 0.0, 0.0, 1.0)


# -- against scipy.stats on the same data ---------------------------------------------------
def test_permutation_p_value_is_scipy_paired_permutation() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, 2, 200).astype(float), rng.integers(0, 2, 200).astype(float)
    test = paired_test(_means(list(a)), _means(list(b)), 999, 5, "accuracy")
    ref = stats.permutation_test((b, a), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
                                 n_resamples=999, rng=interval_rng(5, "accuracy", "permutation"))
    assert test is not None and test["p_value"] == pytest.approx(ref.pvalue)
    paired = stats.bootstrap((b, a), lambda x, y, axis: 100 * np.mean(x - y, axis=axis), paired=True,
                             n_resamples=999, method="percentile", rng=interval_rng(5, "accuracy", "paired"))
    assert (test["low"], test["high"]) == pytest.approx(tuple(paired.confidence_interval), abs=1e-9)


def test_seed_groups_give_mean_and_sample_std(tmp_path: Path) -> None:
    base = {"task": "t", "split": "val", "limit": None, "model": {"spec": "m"}, "data": {"files": {"a": "1"}}}
    runs = [(tmp_path / str(s), {**base, "seed": s}, {"accuracy": v}) for s, v in ((0, 50.0), (1, 54.0), (2, 58.0))]
    other = (tmp_path / "x", {**base, "model": {"spec": "other"}, "seed": 0}, {"accuracy": 1.0})
    [group] = seed_groups([*runs, other])
    assert group["seeds"] == [0, 1, 2] and group["metrics"]["accuracy"] == {"mean": 54.0, "std": 4.0}


# -- end to end: abduct compare against predictions.jsonl alone -------------------------------
def _eval(data: Path, out: Path, model: str) -> Path:
    assert main(["eval", "toy-choice", "--model", model, "--data", str(data), "--out", str(out), "--quiet"]) == 0
    return out


def _correct(run: Path) -> dict[str, float]:
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    return {r["id"]: float(r["label"] == int(np.argmax(r["scores"]))) for r in rows}


def test_compare_agrees_with_an_independent_sign_flip_test(
        toy_registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_toy_data(tmp_path / "toy", items=80)
    first, second = _eval(data, tmp_path / "a", "random"), _eval(data, tmp_path / "b", "random:1")
    a, b = _correct(first), _correct(second)
    # a plain sign-flip test on the paired differences, 20,000 flips: the p-values agree to a Monte Carlo error
    d = np.array([b[k] - a[k] for k in a])
    flips = np.random.default_rng(123).choice([-1.0, 1.0], (20000, len(d)))
    p = (1 + np.sum(np.abs((flips * d).mean(axis=1)) >= abs(d.mean()) - 1e-12)) / 20001
    capsys.readouterr()
    assert main(["compare", str(first), str(second), "--json", "--no-published"]) == 0
    report = json.loads(capsys.readouterr().out)
    test = report["runs"][1]["versus"]["metrics"]["accuracy"]
    assert report["runs"][1]["versus"]["dir"] == str(first) and test["units"] == 80
    assert test["difference"] == pytest.approx(100 * d.mean())
    assert test["p_value"] == pytest.approx(p, abs=0.05) and test["p_holm"] == test["p_value"]  # one metric
    assert test["low"] <= test["difference"] <= test["high"]


def test_compare_with_a_copy_and_with_other_data(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    first = _eval(toy_data, tmp_path / "a", "random")
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)
    other = _eval(write_toy_data(tmp_path / "toy2", items=6), tmp_path / "c", "random")
    capsys.readouterr()
    assert main(["compare", str(first), str(copy), str(other), "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    same = runs[1]["versus"]["metrics"]["accuracy"]
    assert (same["difference"], same["low"], same["high"], same["p_value"], same["p_holm"]) == (0, 0, 0, 1, 1)
    assert "data files differ" in runs[2]["versus"]["refused"] and "metrics" not in runs[2]["versus"]
    assert main(["compare", str(first), str(copy)]) == 0
    text = capsys.readouterr().out
    assert "paired tests against the first run" in text and "sign-flip permutation, 12 question" in text
