"""Judge agreement across runs (``abduct_report.judge_agreement.across_runs``), for any task whose
results declare a per-item verdict: hand-written runs, every figure by hand; no people's labels
and no scores here (the Visual Riddles judge task's tests have both)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abduct import DataError
from abduct_report.judge_agreement import across_runs, across_runs_lines

DECLARED = {"label": "verdict", "judged": {"prompt": "p1"}}


def _run(directory: Path, verdicts: dict[str, Any], declared: dict[str, Any] | None = DECLARED) -> tuple[str, dict[str, Any], Path]:
    directory.mkdir()
    block: dict[str, Any] = {"judges": []}
    if declared is not None:
        block["across_runs"] = declared
    results = {"task": "t", "model": {"spec": directory.name}, "metrics": {}, "details": {"judge_agreement": block}}
    (directory / "results.json").write_text(json.dumps(results))
    (directory / "predictions.jsonl").write_text("".join(json.dumps({"id": k, "verdict": v}) + "\n"
                                                         for k, v in verdicts.items()))
    return directory.name, results, directory


def test_two_runs_without_people_or_scores_by_hand(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", {"i1": True, "i2": True, "i3": False, "i4": None, "i5": False})
    b = _run(tmp_path / "b", {"i1": True, "i2": False, "i3": False, "i4": True, "i6": True})
    other = _run(tmp_path / "c", {"i1": True}, {**DECLARED, "judged": {"prompt": "p2"}})
    plain = _run(tmp_path / "d", {"i1": False}, None)
    block = across_runs([a, b, other, plain])
    assert block is not None and block["runs"] == ["a", "b"] and block["left_out"] == ["c"]
    assert block["items"] == 4 and block["not_in_every_run"] == 2  # i5 and i6
    assert block["human_labels"] == 0 and "alpha_with_people" not in block
    # units i1 (T,T), i2 (T,F), i3 (F,F); i4 has one value: o_TT = 2, o_TF = o_FT = 1, o_FF = 2, n_T = n_F = 3
    assert block["alpha"] == pytest.approx(1 - (6 - 1) * 2 / (2 * 3 * 3))
    (pair,) = block["pairs"]
    # i1..i3: same on 2; a says T 2, F 1, b T 1, F 2: p_e = (2 x 1 + 1 x 2) / 9
    p_o, p_e = 2 / 3, 4 / 9
    assert pair["both_read"] == 3 and pair["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
    assert "difference" not in pair  # no scores declared
    lines = across_runs_lines([a, b, other, plain])
    assert "  b vs a: 3 items both judged, 66.7% same verdict, κ 0.400" in lines
    assert "  2 items not scored by every run are left out" in lines
    assert across_runs([a, plain]) is None


def test_a_verdict_that_is_not_a_label_is_one_line(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", {"i1": True})
    b = _run(tmp_path / "b", {"i1": ["yes"]})
    with pytest.raises(DataError, match=r"b/predictions.jsonl, record i1, field 'verdict': a verdict is a text"):
        across_runs([a, b])
