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
        assert FIELDS <= set(row) <= FIELDS | {"setting", "std", "conditions"}, row
        assert row["task"] in tasks, row["task"]
        for key in ("model", "split", "citation", "source"):
            assert isinstance(row[key], str) and row[key].strip(), (key, row)
        assert row["metrics"] and all(isinstance(v, float) for v in row["metrics"].values()), row
        assert set(row.get("std", {})) <= set(row["metrics"]), row
        # what makes a run comparable with it: the data it was measured on, and for ranks the candidates
        assert row.get("conditions", {}).get("data") in ("real", "synthetic"), row
        if row["task"] == "sherlock-retrieval":
            assert row["conditions"]["candidates"] == 1000, row  # ~1K a chunk (Sherlock § 4.1, footnote 12)
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
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.split("\t") == ["task", "model", "setting", "split", "metrics", "source", "citation"]
    assert main(["published", "whoops-vqa", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [line.split("\t") for line in lines] == [
        [r["task"], r["model"], r.get("setting", "-"), r["split"] or "-",
         ", ".join(f"{k}={v:g}" for k, v in r["metrics"].items()), r["source"], r["citation"]] for r in rows]
    assert "Table 2" in lines[0] and "WHOOPS!" in lines[0]
    assert main(["published", "no-such-task"]) == 2
    assert "unknown task" in capsys.readouterr().err
