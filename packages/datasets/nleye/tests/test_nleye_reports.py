"""NL-EYE's report.html draws per-category bars (reasoning category, domain, time direction and
duration), inlined; its published rows carry the citation."""

from __future__ import annotations

import re
from pathlib import Path

from abduct.host import get_registry
from abduct_nleye.synth import synthesize
from abduct_report.comparison import published_rows
from abduct_testing import main


def test_report_has_per_category_bars(tmp_path: Path) -> None:
    data = synthesize(tmp_path / "data", samples=8, seed=0)
    assert main(["eval", "nleye-pairs", "--model", "random", "--data", str(data), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    alts = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,', (tmp_path / "o" / "report.html").read_text())
    # every breakdown and the intervals (the page puts the plots that need a whole row last)
    assert sorted(alts) == ["by_domain", "by_reasoning_category", "by_time_direction", "by_time_duration", "intervals"]


def test_published_rows() -> None:
    rows = published_rows("nleye-triplet", get_registry())
    assert {r.model: r.metrics["consistency_accuracy"] for r in rows} == {"Human": 85.0, "GPT-4o": 60.0}
    assert all("ICLR 2025" in (r.citation or "") for r in rows)
