"""CoSIm's report.html draws a bar chart per breakdown (by_type, by_change_sentences,
by_question), inlined; its published rows carry the citation."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from abduct.host import get_registry
from abduct_report.comparison import published_rows
from abduct_testing import main


def test_report_has_a_bar_chart_per_breakdown(corpus: Path, tmp_path: Path) -> None:
    assert main(["eval", "cosim", "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    text = (tmp_path / "o" / "report.html").read_text()
    alts = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,', text)
    assert alts == ["by_type", "by_change_sentences", "by_question", "intervals"]
    assert len(re.findall(r"<img ", text)) == len(alts)
    _check_breakdown_intervals(tmp_path / "o")


def _check_breakdown_intervals(run: Path) -> None:
    """Each breakdown group's accuracy gets the interval of its own instances, read back from
    predictions.jsonl and bootstrapped by scipy.stats on the run's stream of draws."""
    import numpy as np
    from scipy import stats

    from abduct.host import interval_rng as rng_for

    results = json.loads((run / "results.json").read_text())
    records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    checked = 0
    for name in ("yes_no", "other"):
        metric = f"by_question.{name}.accuracy"
        correct = np.array([float(r["correct"]) for r in records if r["yes_no"] == (name == "yes_no")])
        if len(correct) < 2:
            continue
        assert results["metrics"]["by_question"][name]["accuracy"] == pytest.approx(100 * correct.mean())
        ref = stats.bootstrap((100 * correct,), np.mean, n_resamples=1000, method="percentile", rng=rng_for(0, metric))
        found = results["intervals"][metric]
        assert found["unit"] == "instance" and found["units"] == len(correct)
        assert (found["low"], found["high"]) == pytest.approx(tuple(ref.confidence_interval), abs=1e-9)
        checked += 1
    assert checked and {f"by_type.{t}.accuracy" for t in results["metrics"]["by_type"]} <= set(results["intervals"])


def test_published_rows() -> None:
    rows = published_rows("cosim", get_registry())
    full = {(r.split, r.source[:7]): r for r in rows if r.model == "LXMERT (full)"}
    assert full["val", "Table 3"].metrics == {"accuracy": 49.25} and full["val", "Table 3"].std == {"accuracy": 1.52}
    assert full["test", "§ 8 Mod"].metrics == {"accuracy": 40.87}
    assert len(full["val", "Table 4"].metrics) == 9 and len(full["val", "Table 5"].metrics) == 3
    assert all(r.source for r in rows) and {r.source[:7] for r in rows} >= {"Table 3", "Table 4", "Table 5", "Table 6"}
    assert all("NAACL 2022" in (r.citation or "") for r in rows)
