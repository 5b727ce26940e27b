"""Metric directions: declaration, pattern lookup, results.json's block and report.md's arrows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct._cli import main
from abduct._declare.metrics import arrow_of, declared_info, lookup, resolve
from abduct._registry.registry import Registry, build_registry
from abduct.contract.metric_info import COUNT, higher, lower, percent
from abduct_testing import TaskContract
from toy_plugin import ToyPlugin, write_toy_data


def test_exact_key_wins_over_pattern_and_first_pattern_wins() -> None:
    declared = {"by_*.*.n": COUNT, "by_*": lower(), "by_type.a.n": percent(), "*": higher()}
    assert lookup(declared, "by_type.a.n") == percent()
    assert lookup(declared, "by_type.b.n") == COUNT
    assert lookup(declared, "by_type.b.accuracy") == lower()  # fnmatch's * crosses dots
    assert lookup(declared, "other") == higher()
    assert lookup({"accuracy": percent()}, "by_type.a.accuracy") is None


def test_resolve_flattens_and_lists_the_undeclared() -> None:
    metrics = {"accuracy": 40.0, "n": 5, "by_type": {"a": {"accuracy": 50.0, "n": 2}}, "setup": "images",
               "flag": True, "mean_rank": 2.5}
    found, missing = resolve({"accuracy": percent(chance=25.0), "*.n": COUNT, "n": COUNT}, metrics)
    assert found == {"accuracy": {"better": "higher", "range": [0.0, 100.0], "chance": 25.0},
                     "n": {"better": None, "range": [0.0, None], "chance": None},
                     "by_type.a.n": {"better": None, "range": [0.0, None], "chance": None}}
    assert missing == ["by_type.a.accuracy", "mean_rank"]  # text and booleans are not metrics


def test_evaluation_declarations_take_precedence() -> None:
    class Task:
        metric_info = {"x": higher(), "y*": lower()}

    merged = declared_info(Task.metric_info, {"x": lower(), "y1": higher()})
    assert merged["x"] == lower() and lookup(merged, "y1") == higher() and lookup(merged, "y2") == lower()
    assert declared_info({}) == {}


def test_arrows() -> None:
    assert (higher().arrow, lower().arrow, COUNT.arrow) == ("↑", "↓", "")
    block = {"a": higher().as_json(), "b": lower().as_json(), "n": COUNT.as_json()}
    assert [arrow_of(block, k) for k in ("a", "b", "n", "missing")] == ["↑", "↓", "", ""]


def test_results_json_and_report_carry_directions(toy_registry: Registry, toy_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["eval", "toy-choice", "--model", "random", "--data", str(toy_data), "--out", str(out), "--quiet"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["metric_info"] == {"accuracy": {"better": "higher", "range": [0.0, 100.0], "chance": 25.0},
                                      "n": {"better": None, "range": [0.0, None], "chance": None}}
    assert "undeclared_metrics" not in results
    report = (out / "report.md").read_text()
    assert "| metric | value | better | chance |" in report
    assert f"| accuracy | {results['metrics']['accuracy']:.4f}".rstrip("0").rstrip(".") in report
    assert "| ↑ higher | 25 |" in report and "| n | 12 |  |  |" in report


def test_the_printed_summary_marks_directions(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "toy-choice", "--model", "random", "--data", str(toy_data), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("  accuracy: ") and lines[1].endswith(" ↑") and lines[2] == "  n: 12"


def test_an_undeclared_metric_is_listed_not_guessed(toy_registry: Registry, toy_data: Path,
                                                    tmp_path: Path) -> None:
    from toy_plugin import ToyChoice

    ToyChoice.metric_info = {"accuracy": percent(chance=25.0)}  # type: ignore[assignment]
    try:
        out = tmp_path / "run"
        assert main(["eval", "toy-choice", "--model", "random", "--data", str(toy_data), "--out", str(out),
                     "--quiet"]) == 0
    finally:
        ToyChoice.metric_info = {"accuracy": percent(chance=25.0), "n": COUNT}
    results = json.loads((out / "results.json").read_text())
    assert results["undeclared_metrics"] == ["n"] and "n" not in results["metric_info"]


class TestToyChoiceContract(TaskContract):
    task_name = "toy-choice"

    def make_data(self, tmp_path: Path) -> Path:
        return write_toy_data(tmp_path, items=6)

    def make_registry(self) -> Registry:
        return build_registry(extra_plugins=[("toy", ToyPlugin())])


class TestToyDescribeContract(TestToyChoiceContract):
    task_name = "toy-describe"
