"""The challenge leaderboard's rows through `abduct published`, and the section of `abduct demo`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct.host import get_registry
from abduct_testing import main


def test_the_leaderboard_rows_are_published(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [r for r in get_registry().published() if r.task == "blackswan-mcq"]
    assert len(rows) == 14 and {r.split for r in rows} == {"test"}
    assert [r.source for r in rows] == [f"leaderboard, rank {k}" for k in range(1, 15)]
    assert all("cogvl.github.io/blackswanleaderboard" in r.citation for r in rows)
    for row in rows:  # pooled: the overall figure is a mix of the two tasks', never outside them
        low, high = sorted((row.metrics["detective_accuracy"], row.metrics["reporter_accuracy"]))
        assert set(row.metrics) == {"accuracy", "detective_accuracy", "reporter_accuracy"}
        assert low <= row.metrics["accuracy"] <= high, row.model
    gpt4o = next(r for r in rows if "GPT4o" in r.model)
    assert dict(gpt4o.metrics) == {"accuracy": 69.06, "detective_accuracy": 63.18, "reporter_accuracy": 78.53}
    assert gpt4o.setting == "organisers' baseline"
    capsys.readouterr()
    assert main(["published", "blackswan-mcq", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 14


def test_the_demo_section_shows_the_probe_above_random_and_text_only(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from abduct_blackswan import _demo
    from abduct_demo import DemoContext

    monkeypatch.setattr(_demo, "VIDEOS", 9)  # the demo's corpus is larger; the rows' order is the point here
    table = _demo.blackswan_section(DemoContext(work=tmp_path, quiet=True))
    assert list(table.rows) == ["random", "text-only", "colour probe"] and table.columns == _demo.COLUMNS
    for task in _demo.TASKS:
        probe = table.rows["colour probe"][task]["accuracy"]
        assert probe > table.rows["random"][task]["accuracy"] + 20
        assert probe > table.rows["text-only"][task]["accuracy"] + 20
    assert table.format().splitlines()[1].split()[:2] == ["model", "mcq.accuracy"]
