"""Scoring lists of (visual, text) rows with the engine, the cheap way for their shape."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from abduct import ScoringEngine, VisualInput
from abduct.kit import unique_index


def score_rows(engine: ScoringEngine, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
    """Scores of ``(visuals[i], texts[i])``. Rows that cover most of the unique-visual x
    unique-text grid (retrieval chunks, one image's localization rows) are scored as one
    matrix (a dual encoder: one encoding per unique input + one product); sparse rows pairwise."""
    if not len(visuals):
        return np.zeros(0)
    uv, v_inv = unique_index(list(visuals))
    ut, t_inv = unique_index(list(texts))
    if 2 * len(visuals) >= len(uv) * len(ut):
        return np.asarray(engine.score_matrix(uv, ut)[v_inv, t_inv])
    return engine.score_pairs(visuals, texts)
