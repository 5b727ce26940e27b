"""`abduct published`: every paper row of every installed task, each with its table."""

from __future__ import annotations

import json

import pytest

from abduct.host import get_registry
from abduct_testing import main

FIELDS = {"task", "model", "split", "metrics", "citation", "source"}


def test_every_published_row_fits_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["published", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    tasks = {c.name for c in get_registry().components("task")}
    for row in rows:
        assert FIELDS <= set(row) <= FIELDS | {"setting", "std"}, row
        assert row["task"] in tasks, row["task"]
        for key in ("model", "split", "citation", "source"):
            assert isinstance(row[key], str) and row[key].strip(), (key, row)
        assert row["metrics"] and all(isinstance(v, float) for v in row["metrics"].values()), row
        assert set(row.get("std", {})) <= set(row["metrics"]), row
    covered = {row["task"] for row in rows}
    for needed in ("sherlock-retrieval", "cosim", "nleye-triplet", "whoops-captioning", "whoops-vqa",
                   "whoops-identification", "var-explanation", "var-premise"):
        assert needed in covered, needed


def test_one_task_and_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["published", "var-explanation", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["task"] for r in rows} == {"var-explanation"}
    assert any(r.get("std") for r in rows)  # the seeds' standard deviations of supplement Table 2
    assert main(["published", "whoops-vqa"]) == 0
    assert "Table 2" in capsys.readouterr().out
    assert main(["published", "no-such-task"]) == 2
    assert "unknown task" in capsys.readouterr().err
