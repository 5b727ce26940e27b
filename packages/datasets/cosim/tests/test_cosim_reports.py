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
    full = {(r.split, r.source[:7]): r for r in rows if r.model == "LXMERT (full)"}
    assert full["val", "Table 3"].metrics == {"accuracy": 49.25} and full["val", "Table 3"].std == {"accuracy": 1.52}
    assert full["test", "§ 8 Mod"].metrics == {"accuracy": 40.87}
    assert len(full["val", "Table 4"].metrics) == 9 and len(full["val", "Table 5"].metrics) == 3
    assert all(r.source for r in rows) and {r.source[:7] for r in rows} >= {"Table 3", "Table 4", "Table 5", "Table 6"}
    assert all("NAACL 2022" in (r.citation or "") for r in rows)
