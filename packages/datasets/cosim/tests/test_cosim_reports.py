"""CoSIm's report.html draws a bar chart per breakdown (by_type, by_change_sentences,
by_question), inlined; its published rows carry the citation."""

from __future__ import annotations

import re
from pathlib import Path

from abduct import get_registry, published_rows
from abduct.testing import main


def test_report_has_a_bar_chart_per_breakdown(corpus: Path, tmp_path: Path) -> None:
    assert main(["eval", "cosim", "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    text = (tmp_path / "o" / "report.html").read_text()
    alts = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,', text)
    assert alts == ["by_type", "by_change_sentences", "by_question", "intervals"]
    assert len(re.findall(r"<img ", text)) == len(alts)


def test_published_rows() -> None:
    rows = published_rows("cosim", get_registry())
    assert {r.model: r.metrics["accuracy"] for r in rows}["LXMERT (full)"] == 49.25
    assert all("NAACL 2022" in (r.citation or "") for r in rows)
