"""The demo's overview (``OUT/report.html``) beside the papers' rows: every corpus of the demo is
synthetic, so the page says that no paper row is comparable with its runs and draws none of them
on a bar chart beside the runs; the rows stay in the tables, with their conditions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from abduct import PublishedRow, hookimpl
from abduct.host import Registry, build_registry, main, reset_registry
from abduct_demo.runner import write_overview
from abduct_testing.toy import ToyPlugin, write_toy_data


class PaperPlugin(ToyPlugin):
    @hookimpl
    def register_published(self) -> list[PublishedRow]:
        return [PublishedRow("toy-choice", "Human", "val", {"accuracy": 42.3}, "Paper. Venue 2024", "Table 2",
                             "human", conditions={"data": "real"})]


@pytest.fixture
def registry() -> Iterator[Registry]:
    found = build_registry(extra_plugins=[("toy-paper", PaperPlugin())])
    reset_registry(found)
    yield found
    reset_registry()


def test_overview_keeps_synthetic_runs_off_the_papers_charts(registry: Registry, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from abduct_report import comparison

    charted: list[dict[str, Any]] = []
    real = comparison.bars
    monkeypatch.setattr(comparison, "bars", lambda *args: charted.append(dict(args[1])) or real(*args))
    data = write_toy_data(tmp_path / "data", items=16)
    for label in ("random", "tuned"):  # where the demo's sections keep their runs: <section>/eval/<label>/<task>
        assert main(["eval", "toy-choice", "--model", "random", "--data", str(data), "--quiet", "--ci-resamples", "50",
                     "--seed", str(len(label)), "--out", str(tmp_path / "out" / "toy" / "eval" / label / "toy-choice")]) == 0
    page = write_overview(tmp_path / "out", registry)
    assert page is not None
    text = " ".join(page.read_text().replace("&#x27;", "'").split())
    assert "Not comparable with the paper's rows: random (toy), tuned (toy): data synthetic, the paper's real" in text
    assert "Human (paper, Table 2)" in text and "val, synthetic data" in text and "val, real data" in text
    assert charted and not any("(paper)" in name for groups in charted for name in groups)
