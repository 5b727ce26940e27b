"""The walk of one ``abduct eval`` (tools/run_walk.py): at most 25 returns to a room of the run
it had left, the task spec's dataset built once, and no plugin code entered except through the
registry's factories and hooks, the task's plan/finish/view, the dataset's loading and the model."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "run_walk.py"


def test_the_run_walks_through_each_room_without_coming_back_more_than_25_times() -> None:
    spec = importlib.util.spec_from_file_location("run_walk", TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules["run_walk"] = tool
    spec.loader.exec_module(tool)
    found = tool.walk(limit=5)
    assert found["returns"] <= 25, found["walk"]
    assert found["unexpected"] == []
    assert found["counted"]["abduct_plugin_example.data:make_choice_questions"] == 1  # the dataset built once
    assert found["counted"]["abduct._declare.traits:task_traits"] <= 2  # the runner's read, and the registry's check
    assert found["metrics"]["n"] == 5
