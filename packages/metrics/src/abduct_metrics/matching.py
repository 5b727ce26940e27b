"""One-to-one matching of two sets of sentences on a score matrix (BlackSwan's generative
scorer): the Hungarian assignment that maximises the total score, as
``scipy.optimize.linear_sum_assignment(matrix, maximize=True)``.

Rows are one set (BlackSwan: the gold answers), columns the other (the model's responses); a
rectangular matrix gives ``min(rows, columns)`` pairs and the sentences left over are ignored.
The pairs' **avg** is the same for every optimal assignment. Their **max** is not when several
assignments reach the optimum (BlackSwan's own code takes whichever scipy returns); here it is
fixed: **the highest pair score that belongs to some optimal assignment**, optimal meaning a
total within ``TIE_TOLERANCE`` of scipy's optimum. So it depends neither on the order of the
sentences nor on the solver's choice among equal assignments, and equals scipy's choice
whenever the optimum is unique.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Scores of float32 models (BERTScore) summed in float64 are exact, so their ties are exact;
# this tolerance only absorbs the rounding of hand-written float64 matrices (0.9 + 0.2 vs 0.5 + 0.6).
TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Matching:
    """The matched ``(row, column, score)`` triples (by row), their mean and their maximum.
    An empty matrix (a set without sentences) gives no pairs and ``avg = max = 0.0``."""

    pairs: tuple[tuple[int, int, float], ...]
    avg: float
    max: float


def match_one_to_one(scores: np.ndarray) -> Matching:
    """The maximum-total one-to-one matching of rows to columns of ``scores`` (see the module
    for how ties between optimal assignments are settled)."""
    from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]

    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"a score matrix needs two dimensions, got shape {matrix.shape}")
    if matrix.size == 0:
        return Matching((), 0.0, 0.0)
    if not np.all(np.isfinite(matrix)):
        raise ValueError("the score matrix holds a value that is not finite")
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    chosen = list(zip(rows.tolist(), cols.tolist()))
    best = float(matrix[rows, cols].sum())
    highest = float(matrix[rows, cols].max())
    # A higher cell is part of an optimal assignment iff forcing it still reaches the optimum.
    for flat in np.argsort(-matrix, axis=None, kind="stable"):
        i, j = divmod(int(flat), matrix.shape[1])
        if matrix[i, j] <= highest:
            break
        rest = np.delete(np.delete(matrix, i, axis=0), j, axis=1)
        sub_rows, sub_cols = linear_sum_assignment(rest, maximize=True) if rest.size else ([], [])
        total = float(matrix[i, j]) + float(rest[sub_rows, sub_cols].sum()) if rest.size else float(matrix[i, j])
        if total >= best - TIE_TOLERANCE:
            chosen = [(i, j)] + [(r + (r >= i), c + (c >= j)) for r, c in zip(list(sub_rows), list(sub_cols))]
            break
    chosen.sort()
    pairs = tuple((int(r), int(c), float(matrix[r, c])) for r, c in chosen)
    values = [s for _, _, s in pairs]
    return Matching(pairs, float(np.mean(values)), float(max(values)))
