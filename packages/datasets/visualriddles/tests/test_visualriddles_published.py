"""The published rows: every one with its source and conditions, on a registered task and metric,
listed by ``abduct published``; the numbers the reference's tables hold, spot-checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct.host import build_registry, main
from abduct_visualriddles.judge import JudgeTask
from abduct_visualriddles.mcq import McqTask
from abduct_visualriddles.open import OpenTask

DECLARED = {"visualriddles-mcq": McqTask.metric_info, "visualriddles-judge": JudgeTask.metric_info,
            "visualriddles-open": {**OpenTask.metric_info, "human_rating": None}}  # people's rating: no abduct metric


def test_every_row_is_sourced_conditioned_and_listed(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [r for r in build_registry().published() if r.task.startswith("visualriddles-")]
    assert len(rows) == 67
    for row in rows:
        assert row.source and row.citation and row.conditions.get("data") == "real", row
        assert set(row.metrics) <= set(DECLARED[row.task]), row
        assert ("setup" in row.conditions) != (row.task == "visualriddles-judge"), row
        assert ("reference" in row.conditions) == (row.task == "visualriddles-judge" or "judge" in row.conditions), row
    assert main(["published", "visualriddles-mcq", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    gpt4 = [r for r in listed if r["model"] == "GPT4"]
    assert {(r["conditions"]["setup"], r["metrics"]["accuracy"]) for r in gpt4} == {
        ("plain", 45), ("hint", 69), ("attribution", 82)}
    assert next(r for r in gpt4 if r["conditions"]["setup"] == "plain")["metrics"] == {
        "accuracy": 45, "cannot_determine": 12, "accuracy_without_cd": 52}
    o1 = [r for r in listed if r["model"] == "OpenAI o1"]
    assert {r["metrics"]["accuracy"] for r in o1} == {58, 82} and "Leaderboard" in o1[0]["citation"]


def test_the_demo_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from abduct_demo import DemoContext
    from abduct_visualriddles import _demo

    monkeypatch.setattr(_demo, "RIDDLES", 10)
    table = _demo.visualriddles_section(DemoContext(work=tmp_path, quiet=True))
    assert list(table.rows) == ["random", "text-only"] and table.columns == _demo.COLUMNS
    for row in table.rows.values():
        mcq = row["visualriddles-mcq"]
        assert mcq["accuracy"] <= mcq.get("accuracy_without_cd", 100.0) and row["visualriddles-judge"]["n"] == 30
