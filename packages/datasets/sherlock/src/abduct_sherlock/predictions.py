"""Reading predictions in the leaderboard formats: ``{test_id: score}`` JSON, or a float
``.npy`` in sorted-test_id order (with an optional JSON list of the ids it follows).

Scores are read as the official scorers read them: any float, +-inf included (the
log-probability of a masked candidate is -inf; a JSON number beyond the float range reads as
+-inf, as ``1e400`` does in Python's json). NaN is refused: no ranking holds it."""

from __future__ import annotations

import math
from collections.abc import Collection
from pathlib import Path

import numpy as np

from abduct import DataError
from abduct.kit import read_json, require_file


def _is_npy(path: Path) -> bool:
    return path.suffix.lower() == ".npy"


def _read_ids(path: Path) -> list[str]:
    ids = read_json(path, "instance ids")
    if not isinstance(ids, list):
        raise DataError(f"expected a JSON list of test ids, got {type(ids).__name__}", file=path)
    for i, tid in enumerate(ids):
        if not isinstance(tid, str):
            raise DataError(f"expected a test id string, got {type(tid).__name__}", file=path, record=i)
    return ids


def _read_array(path: Path) -> np.ndarray:
    require_file(path, "predictions")
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise DataError(f"not a readable .npy array ({exc})", file=path) from None
    if not isinstance(arr, np.ndarray) or arr.ndim != 1:
        raise DataError(f"expected a 1-D array of scores, got shape {getattr(arr, 'shape', None)}", file=path)
    if not np.issubdtype(arr.dtype, np.floating):
        raise DataError(f"expected float32 or float64 scores, got dtype {arr.dtype}", file=path)
    return arr


def load_predictions(path: Path, expected: Collection[str], instance_ids: Path | None = None) -> dict[str, float]:
    """Scores by test id, checked against the answer key's ids ``expected``.

    Raises DataError naming the first offending test id for: a NaN or non-numeric score, an
    id the key does not know (or given twice), an id without a score, an array whose length
    differs from its id list. +-inf scores are kept.
    """
    path = Path(path)
    known: set[str] | frozenset[str] = expected if isinstance(expected, (set, frozenset)) else set(expected)
    if _is_npy(path):
        arr = _read_array(path)
        from_key = instance_ids is None
        ids = sorted(known) if from_key else _read_ids(Path(instance_ids))  # type: ignore[arg-type]
        if len(arr) != len(ids):
            if len(arr) < len(ids):
                raise DataError(f"{len(arr)} scores for {len(ids)} test ids: no score for this id (the first without one)",
                                file=path, record=ids[len(arr)])
            last = ids[-1] if ids else None
            raise DataError(f"{len(arr)} scores for {len(ids)} test ids: {len(arr) - len(ids)} extra score(s) after the last id {last}",
                            file=path, record=f"#{len(ids)}")
        if not from_key and (len(set(ids)) != len(ids) or not known.issuperset(ids)):
            _first_bad_id(ids, known, path)
        bad = np.flatnonzero(np.isnan(arr))
        if len(bad):
            raise DataError("NaN is not a score (no ranking can place it)", file=path, record=ids[int(bad[0])], field="score")
        scores = dict(zip(ids, arr.astype(np.float64).tolist()))
    else:
        raw = read_json(path, "predictions", allow_non_finite=True)
        if not isinstance(raw, dict):
            raise DataError(f"expected a JSON object {{test_id: score}}, got {type(raw).__name__}", file=path)
        scores = {}
        for tid, value in raw.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise DataError(f"score is not a number: {value!r}", file=path, record=tid)
            _add(scores, tid, float(value), known, path)
    if len(scores) != len(known):
        missing = next(t for t in sorted(known) if t not in scores)
        raise DataError("no prediction for this test id (the first missing in sorted order)", file=path, record=missing)
    return scores


def _first_bad_id(ids: list[str], known: Collection[str], path: Path) -> None:
    seen: set[str] = set()
    for tid in ids:
        if tid not in known:
            raise DataError("test id not in the answer key", file=path, record=tid)
        if tid in seen:
            raise DataError("test id given twice", file=path, record=tid)
        seen.add(tid)


def _add(scores: dict[str, float], tid: str, value: float, known: Collection[str], path: Path) -> None:
    if math.isnan(value):
        raise DataError("NaN is not a score (no ranking can place it)", file=path, record=tid, field="score")
    if tid not in known:
        raise DataError("test id not in the answer key", file=path, record=tid)
    if tid in scores:
        raise DataError("test id given twice", file=path, record=tid)
    scores[tid] = value
