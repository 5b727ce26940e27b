"""Official-format predictions: four scores per record, in file order.

Either a JSON list (record i's scores at position i, as many entries as records) or an
object ``{"<index>": [s0, s1, s2, s3]}`` covering every index. +-inf scores are kept (the
authors' float32 comparison ranks them; a number beyond the float range reads as +-inf, as
``1e400`` does in Python's json). A missing or unknown index, a wrong number of scores, a
non-number or a NaN is a DataError naming the file, the record and the field.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from abduct import DataError
from abduct.kit import read_json


def _scores(value: Any, file: Path, index: str) -> list[float]:
    if not isinstance(value, list) or len(value) != 4:
        got = f"{len(value)} scores" if isinstance(value, list) else type(value).__name__
        raise DataError(f"expected a list of 4 scores, got {got}", file=file, record=index, field="scores")
    out = []
    for k, score in enumerate(value):
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise DataError(f"expected a number, got {score!r}", file=file, record=index, field=f"scores[{k}]")
        if math.isnan(score):
            raise DataError("NaN is not a score (no choice can be picked by it)", file=file, record=index,
                            field=f"scores[{k}]")
        out.append(float(score))
    return out


def load_predictions(path: Path, count: int) -> dict[int, list[float]]:
    """The scores of records ``0 .. count-1`` from ``path``."""
    path = Path(path)
    data = read_json(path, "predictions file", allow_non_finite=True)
    if isinstance(data, list):
        if len(data) != count:
            raise DataError(f"expected {count} entries (one per record of the answer key), got {len(data)}", file=path)
        return {i: _scores(v, path, str(i)) for i, v in enumerate(data)}
    if not isinstance(data, dict):
        raise DataError(f"expected a JSON list or object, got {type(data).__name__}", file=path)
    found: dict[int, list[float]] = {}
    for key, value in data.items():
        if not key.isdigit() or int(key) >= count or str(int(key)) != key:
            raise DataError(f"not a record index of the answer key (0-{count - 1})", file=path, record=key)
        found[int(key)] = _scores(value, path, key)
    missing = [i for i in range(count) if i not in found]
    if missing:
        shown = ", ".join(map(str, missing[:5])) + (", ..." if len(missing) > 5 else "")
        raise DataError(f"no scores for {len(missing)} record(s): {shown}", file=path, record=missing[0])
    return found
