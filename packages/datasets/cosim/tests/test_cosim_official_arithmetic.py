"""`abduct score cosim` reports the authors' number on hand-built files where float32 loses
information: gaps below float32's resolution, subnormal scores, scores beyond float32's
range (1e300), -inf scores. The official definition is written here independently (the first
maximum of the four scores as float32, as ``logit.max(1)`` of the released training script
picks it; with torch where it is installed), and the full-precision one (float64) beside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct_testing import main
from conftest import record, write_json

EPS = 2.0 ** -30  # far below float32's resolution at 1 (2 ** -23), far above float64's
TINY = 5e-324  # the smallest subnormal: k * TINY is exact
CASES: dict[str, list[list[float]]] = {
    # label 1 each time: float64 picks it, float32 ties it with choice 0, which comes first
    "gap below float32": [[1.0, 1.0 + EPS, 0.5, 0.0]],
    "subnormal": [[TINY, 2 * TINY, 0.0, -TINY]],
    "beyond float32": [[1e300, 2e300, 0.0, -1e300]],
    "ties near 1e8": [[1e8, 1e8 + 1.0, 0.0, 1e8 - 4.0]],
}


def _official(scores: list[float]) -> int:
    with np.errstate(over="ignore"):
        return int(np.argmax(np.asarray(scores, dtype=np.float64).astype(np.float32)))


def _official_torch(scores: list[float]) -> int | None:
    """The authors' operation itself, where torch is installed."""
    try:
        import torch
    except ImportError:
        return None
    return int(torch.tensor([scores], dtype=torch.float32).max(1)[1].item())


def _score(tmp_path: Path, key: Path, rows: list[list[float]], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(rows))  # json writes Infinity for inf
    code = main(["score", "cosim", "--predictions", str(path), "--answer-key", str(key), "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


@pytest.fixture
def key(tmp_path: Path) -> Path:
    return write_json(tmp_path / "val.json", [record(label=1), record(label=2)])


@pytest.mark.parametrize("case", sorted(CASES))
def test_official_number_with_full_precision_and_one_warning(tmp_path: Path, key: Path,
                                                             capsys: pytest.CaptureFixture[str], case: str) -> None:
    rows = [*CASES[case], [0.0, 0.0, 1.0, 0.0]]  # the second record is right in both arithmetics
    labels = [1, 2]
    official = [_official(r) for r in rows]
    for row, picked in zip(rows, official):
        assert _official_torch(row) in (None, picked)
    full = [int(np.argmax(r)) for r in rows]
    assert official != full  # the case is one where float32 loses information
    code, out, err = _score(tmp_path, key, rows, capsys)
    assert code == 0
    assert out["accuracy"] == 100.0 * sum(p == g for p, g in zip(official, labels)) / 2 == 50.0
    assert out["full_precision"] == {"accuracy": 100.0 * sum(p == g for p, g in zip(full, labels)) / 2} == {
        "accuracy": 100.0}
    [line] = err.strip().splitlines()
    assert line.startswith(f"warning: {tmp_path / 'p.json'}: ") and "on 1 of 2 records" in line
    assert "accuracy 50.0000 (official), 100.0000 (full precision)" in line and "subtract each record's" in line


def test_the_fix_makes_them_agree(tmp_path: Path, key: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the warning advises: each record's largest finite score subtracted, then divided by
    the largest magnitude left; float32 then keeps the scores apart."""
    for case in CASES.values():
        rows = [*case, [0.0, 0.0, 1.0, 0.0]]
        fixed = []
        for row in rows:
            r = np.asarray(row) / 2 ** 1000 if max(map(abs, row)) > 1e300 else np.asarray(row)  # no overflow
            shifted = r - r.max()
            fixed.append((shifted / np.abs(shifted).max() if np.abs(shifted).max() > 0 else shifted).tolist())
        code, out, err = _score(tmp_path, key, fixed, capsys)
        assert code == 0 and out["accuracy"] == 100.0 and "full_precision" not in out and err == ""


def test_minus_infinity_is_ranked_and_its_ties_go_to_the_first(tmp_path: Path, key: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A masked candidate's log-probability: -inf is below every finite score, and four -inf
    tie (the first wins), in float32 as in float64: nothing is lost, nothing is warned."""
    inf = float("inf")
    rows = [[-inf, 0.5, -inf, -inf], [-inf, -inf, -inf, -inf]]
    assert [_official(r) for r in rows] == [1, 0]
    code, out, err = _score(tmp_path, key, rows, capsys)
    assert code == 0 and out["accuracy"] == 50.0 and "full_precision" not in out and err == ""


def test_gold_margin_is_the_golds_lead_over_the_best_other() -> None:
    from abduct_cosim.official import gold_margin

    assert gold_margin([0.1, 0.7, 0.3], 1) == pytest.approx(0.4)
    assert gold_margin([0.1, 0.7, 0.3], 0) == pytest.approx(-0.6)
    assert gold_margin([0.5], 0) is None and gold_margin([0.1, 0.2], 5) is None
