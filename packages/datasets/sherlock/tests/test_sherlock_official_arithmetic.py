"""`abduct score` / `abduct eval` report the official scorers' numbers on hand-built files
where their arithmetic loses information (ties near 1e8, gaps below float32's resolution or
below the 1e-9 tie-break offsets, subnormal scores), with one warning and the full-precision
value beside them; -inf scores are ranked wherever the official code ranks them; where it has
no number (lapjv given infinite costs: 1e300, -inf) abduct's value stands with a warning.

Each expected value comes from the official definitions written here independently: the
comparison offsets added to float64 scores (``np.random.seed(1)``'s first ten draws / 1e9),
``lapjv.lapjv(-S)`` itself (float32 inside) for GT boxes, ``scipy.stats.rankdata`` for
retrieval, ``np.argmax`` for auto boxes; full precision by exhaustive search with exact
fractions (GT) and by offsets that break exact ties only (comparison)."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import rankdata
from sherlock_test_util import write_json

from abduct.host import EvalConfig, run_evaluation
from abduct_testing import main, registry_with_models, scaled_models

TINY = 5e-324  # the smallest subnormal: k * TINY is exact
EPS = 2.0 ** -30  # below float32's resolution at 1 (2 ** -23), far above float64's
INF = float("inf")


def _score(tmp_path: Path, task: str, key: Path, preds: dict[str, float],
           capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, list[str]]:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preds))  # json writes Infinity for inf
    code = main(["score", f"sherlock-{task}", "--predictions", str(path), "--answer-key", str(key), "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err.strip().splitlines()


def _offsets() -> np.ndarray:
    state = np.random.get_state()
    try:
        np.random.seed(1)
        return np.random.random(size=10) / 1e9
    finally:
        np.random.set_state(state)


# -- comparison -----------------------------------------------------------------------------
LABELS = ([3.0, 1.0, 2.0], [2.0, 1.0, 3.0])  # annot1, annot2 of candidates c0, c1, c2


def _pairwise(pred: list[float], label: list[float], full: bool) -> float:
    """The official definition (offsets added in float64) or, ``full``, offsets for exact ties only."""
    off = _offsets()[: len(pred)]
    tiebroken = np.asarray(pred, dtype=np.float64) + off
    correct = total = 0
    for a, b in itertools.combinations(range(len(label)), 2):
        if label[a] == label[b]:
            continue
        total += 1
        below = (off[a] < off[b] if pred[a] == pred[b] else pred[a] < pred[b]) if full else tiebroken[a] < tiebroken[b]
        correct += int((label[a] < label[b]) == below)
    return (correct / total - 0.5) * 2 if total else 0.0


def _comparison(pred: list[float], full: bool) -> float:
    return 100 * float(np.mean([_pairwise(pred, label, full) for label in LABELS]))


@pytest.fixture
def comparison_key(tmp_path: Path) -> Path:
    cands = [{"source_iid": f"k{i}", "annot1": LABELS[0][i], "annot2": LABELS[1][i]} for i in range(3)]
    return write_json(tmp_path / "key.json", {
        "test_id_map": {f"c{i}": {"Input_iid": "s", "candidate": f"k{i}"} for i in range(3)},
        "annotations": [{"Input_iid": "s", "candidates": [{**c, "annot1": int(c["annot1"]), "annot2": int(c["annot2"])}
                                                          for c in cands]}],
    })


COMPARISON_CASES = {
    "ties near 1e8": [1e8, 1e8, 0.0],  # the offsets (< 1e-9) round away next to 1e8
    "ties near 1e300": [1e300, 1e300, 0.0],
    "-inf ties": [-INF, -INF, 0.0],  # -inf + offset is -inf: the tie stays
    "subnormal": [2 * TINY, TINY, 0.0],  # the offsets order them, not their values
    "gap below the offsets": [0.5 + 1e-10, 0.5, 0.1],
}


@pytest.mark.parametrize("case", sorted(COMPARISON_CASES))
def test_comparison_reports_the_official_number(tmp_path: Path, comparison_key: Path,
                                                capsys: pytest.CaptureFixture[str], case: str) -> None:
    pred = COMPARISON_CASES[case]
    official, full = _comparison(pred, full=False), _comparison(pred, full=True)
    assert official != full  # the case is one where the official arithmetic loses information
    code, out, err = _score(tmp_path, "comparison", comparison_key, {f"c{i}": v for i, v in enumerate(pred)}, capsys)
    assert code == 0 and out["accuracy"] == official and out["full_precision"] == {"accuracy": full}
    [line] = err
    assert line.startswith(f"warning: {tmp_path / 'p.json'}: ") and "on 1 of 1 sources" in line
    assert f"accuracy {official:.4f} (official), {full:.4f} (full precision)" in line and "[-1, 1]" in line


def test_comparison_ranks_distinct_infinities_without_a_warning(tmp_path: Path, comparison_key: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    pred = [INF, -INF, 0.0]
    code, out, err = _score(tmp_path, "comparison", comparison_key, {f"c{i}": v for i, v in enumerate(pred)}, capsys)
    assert code == 0 and out["accuracy"] == _comparison(pred, full=False) == _comparison(pred, full=True)
    assert "full_precision" not in out and err == []


# -- GT localization ------------------------------------------------------------------------
def _gt_key(tmp_path: Path, images: int) -> Path:
    key = {f"u{m}g{b}{i}": {"type": "gt", "image": f"u{m}", "inst_id": f"u{m}i{i}", "bbox_idx": b, "correct": b == i}
           for m in range(images) for b in range(2) for i in range(2)}
    return write_json(tmp_path / "key.json", key)


def _gt_predictions(matrices: list[list[list[float]]]) -> dict[str, float]:
    return {f"u{m}g{b}{i}": matrix[b][i] for m, matrix in enumerate(matrices) for b in range(2) for i in range(2)}


def _official_gt(matrix: list[list[float]]) -> float:
    """The official call on one image (safe here: float32 holds these scores)."""
    import lapjv

    sim = np.array(matrix, dtype=np.float64)
    return float(np.mean(np.arange(len(sim)) == lapjv.lapjv(-sim)[0]))


def _full_gt(matrix: list[list[float]]) -> float:
    """The best assignment for the exact scores (unique in these cases), by exhaustive search."""
    def value(p: tuple[int, ...]) -> tuple[int, Fraction]:
        taken = [matrix[i][j] for i, j in enumerate(p)]
        return (sum(v == INF for v in taken) - sum(v == -INF for v in taken),
                sum((Fraction(v) for v in taken if abs(v) != INF), Fraction(0)))
    ranked = sorted(itertools.permutations(range(len(matrix))), key=value, reverse=True)
    assert value(ranked[0]) > value(ranked[1])
    return float(np.mean(np.arange(len(matrix)) == np.array(ranked[0])))


GT_DEGRADED = {  # float32 rounds them all to one value: lapjv swaps the boxes of an all-equal 2x2 matrix
    "gap below float32": [[1 + EPS, 1.0], [1.0, 1 + EPS]],
    "subnormal": [[2 * TINY, TINY], [TINY, 2 * TINY]],
    "ties near 1e8": [[1e8 + 1, 1e8], [1e8, 1e8 + 1]],
}
GT_UNAVAILABLE = {  # float32 costs that are infinite: the official lapjv call has no number
    "1e300": [[2e300, 1e300], [1e300, 2e300]],
    "-inf": [[0.0, -INF], [-INF, 0.0]],
    "+inf": [[INF, 0.0], [0.0, 1.0]],
}
FINE = [[0.9, 0.1], [0.2, 0.8]]


@pytest.mark.parametrize("case", sorted(GT_DEGRADED))
def test_gt_reports_the_official_number(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    matrices = [GT_DEGRADED[case], FINE]
    official = 100 * float(np.mean([_official_gt(m) for m in matrices]))
    full = 100 * float(np.mean([_full_gt(m) for m in matrices]))
    assert (official, full) == (50.0, 100.0)
    code, out, err = _score(tmp_path, "localization", _gt_key(tmp_path, 2), _gt_predictions(matrices), capsys)
    assert code == 0 and out == {"gt_accuracy": official, "full_precision": {"gt_accuracy": full}}
    [line] = err
    assert line.startswith(f"warning: {tmp_path / 'p.json'}: ") and "on 1 of 2 images" in line and "float32" in line
    assert "gt_accuracy 50.0000 (official), 100.0000 (full precision)" in line


@pytest.mark.parametrize("case", sorted(GT_UNAVAILABLE))
def test_gt_without_an_official_number_counts_full_precision(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              case: str) -> None:
    matrices = [GT_UNAVAILABLE[case], FINE]
    expected = 100 * float(np.mean([_full_gt(m) for m in matrices]))
    code, out, err = _score(tmp_path, "localization", _gt_key(tmp_path, 2), _gt_predictions(matrices), capsys)
    assert code == 0 and out == {"gt_accuracy": expected, "full_precision": {"gt_accuracy": expected},
                                 "official_unavailable": {"gt_accuracy": 1}}
    [line] = err
    assert "has no gt_accuracy for 1 of 2 images" in line and "abduct's full-precision value" in line


def test_the_gt_fix_makes_them_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the warning advises: each image's scores shifted and scaled into [-1, 1]."""
    fixed = []
    for matrix in [*GT_DEGRADED.values(), GT_UNAVAILABLE["1e300"]]:
        m = np.ldexp(np.array(matrix), -int(np.frexp(np.max(np.abs(matrix)))[1]))  # exact, so no overflow below
        fixed.append(((m - (m.max() + m.min()) / 2) / ((m.max() - m.min()) / 2)).tolist())
    code, out, err = _score(tmp_path, "localization", _gt_key(tmp_path, len(fixed)), _gt_predictions(fixed), capsys)
    assert code == 0 and out == {"gt_accuracy": 100.0} and err == []


# -- retrieval and auto boxes: exact comparisons, -inf ranked -------------------------------
def test_retrieval_ranks_minus_infinity_like_rankdata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = ["a", "b", "c"]
    sim = np.array([[-INF, -INF, 0.0], [1e8, 1e8, 1e8 + 1], [TINY, 0.0, 2 * TINY]])
    key = write_json(tmp_path / "key.json", {f"t{x}{y}": [x, y] for x in ids for y in ids})
    preds = {f"t{x}{y}": float(sim[i, j]) for i, x in enumerate(ids) for j, y in enumerate(ids)}
    row, col = np.diagonal(rankdata(-sim, axis=1)), np.diagonal(rankdata(-sim, axis=0))
    expected = {"im2txt": float(np.mean(row)), "txt2im": float(np.mean(col)), "p_at_1": float(100 * np.mean(row == 1.0))}
    code, out, err = _score(tmp_path, "retrieval", key, preds, capsys)
    assert (code, out, err) == (0, expected, [])


def test_auto_boxes_rank_minus_infinity_like_argmax(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proposals = {"x": [(-INF, 0.9), (-INF, 0.2)], "y": [(-INF, 0.1), (1e-300, 0.7)], "z": [(TINY, 0.3), (0.0, 0.8)]}
    key = write_json(tmp_path / "key.json", {f"{i}{k}": {"type": "auto", "image": "u", "inst_id": i, "IoU": iou}
                                             for i, rows in proposals.items() for k, (_, iou) in enumerate(rows)})
    preds = {f"{i}{k}": s for i, rows in proposals.items() for k, (s, _) in enumerate(rows)}
    hits = [float(rows[int(np.argmax([s for s, _ in rows]))][1] > 0.5) for rows in proposals.values()]
    code, out, err = _score(tmp_path, "localization", key, preds, capsys)
    assert (code, out, err) == (0, {"auto_accuracy": 100 * float(np.mean(hits))}, [])


# -- abduct eval: the same headline, the full precision in details ---------------------------
def _eval_at_1e300(corpus: Path, out: Path, task: str, limit: int) -> dict[str, Any]:
    """``task`` run with a scorer of integer scores (-3..3: many ties) x 1e300."""
    models = scaled_models()
    name = next(n for n, (about, _) in models.items() if about.endswith("x 1e+300"))
    return run_evaluation(EvalConfig(task=task, model=name, data_dir=corpus, out_dir=out, quiet=True, use_cache=False,
                                     limit=limit), registry_with_models("sherlock-scaled", models))


def test_eval_comparison_at_1e300_reports_the_official_number(corpus: Path, tmp_path: Path) -> None:
    """Next to 1e300 the offsets round away: ties stay ties."""
    with pytest.warns(UserWarning, match="sherlock-comparison: the official arithmetic loses information"):
        result = _eval_at_1e300(corpus, tmp_path / "o", "sherlock-comparison", 40)
    key = json.loads((corpus / "val_comparison" / "val_comparison_answer_key.json").read_text())
    labels = {a["Input_iid"]: ([c["annot1"] for c in a["candidates"]], [c["annot2"] for c in a["candidates"]])
              for a in key["annotations"]}
    rows = [json.loads(line) for line in (tmp_path / "o" / "predictions.jsonl").read_text().splitlines()]

    def figure(full: bool) -> float:
        return 100 * float(np.mean([np.mean([_pairwise(r["scores"], lab, full) for lab in labels[r["source"]]])
                                    for r in rows]))

    assert result["metrics"]["accuracy"] == figure(False)
    assert result["details"]["full_precision"]["accuracy"] == figure(True)
    assert figure(False) != figure(True)


def test_eval_localization_at_1e300_counts_full_precision(corpus: Path, tmp_path: Path) -> None:
    """float32 cannot hold 1e300: the official lapjv call has no number on any image."""
    with pytest.warns(UserWarning, match="sherlock-localization: the official scorer has no gt_accuracy for 8 of 8"):
        result = _eval_at_1e300(corpus, tmp_path / "o", "sherlock-localization", 8)
    rows = [json.loads(line) for line in (tmp_path / "o" / "predictions.jsonl").read_text().splitlines()]
    assert [r["gt_accuracy_official"] for r in rows] == ["unavailable"] * 8
    assert result["details"]["official_unavailable"] == {"gt_accuracy": 8}
    assert result["metrics"]["gt_accuracy"] == 100 * float(np.mean([r["gt_accuracy"] for r in rows]))


def test_submission_arrays_keep_infinities_and_refuse_nan() -> None:
    from abduct import AbductError
    from abduct_sherlock.submission import sorted_array

    with pytest.warns(UserWarning, match="1 finite score"):
        arr = sorted_array({"b": 1e300, "a": -INF, "c": 0.5}, "retrieval_0")
    assert arr.dtype == np.float32 and arr.tolist() == [-INF, INF, 0.5]
    with pytest.raises(AbductError, match="NaN score for test id c"):
        sorted_array({"b": 1.0, "a": -INF, "c": float("nan")}, "retrieval_0")
