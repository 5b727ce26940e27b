"""A metric from (resampled) per-unit data: the aggregates ``UnitScores`` names.

Each function takes values of shape ``(..., n)`` (``mean``) or ``(..., n, 10)`` (BLEU's
statistics rows) and returns the metric over the last unit axis, so that scipy's vectorised
resampling evaluates a whole batch of resamples in one call.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from abduct.contract.units import UnitScores

# pycocoevalcap's BleuScorer guards: added to matched n-grams and to guessed n-grams / lengths
_TINY, _SMALL = 1e-15, 1e-9


def _mean(values: np.ndarray) -> np.ndarray:
    return np.asarray(values.mean(axis=-1))


def _ratio(rows: np.ndarray) -> np.ndarray:
    sums = rows.sum(axis=-2)
    return np.asarray(sums[..., 0] / sums[..., 1])


def _bleu(order: int) -> Callable[[np.ndarray], np.ndarray]:
    """BLEU-``order`` of summed rows, as pycocoevalcap's ``BleuScorer.compute_score`` (closest
    reference length): the geometric mean of the clipped precisions times the brevity penalty."""
    def bleu(rows: np.ndarray) -> np.ndarray:
        sums = rows.sum(axis=-2)
        test_len, ref_len = sums[..., 0], sums[..., 1]
        guessed, matched = sums[..., 2:6], sums[..., 6:10]
        precisions = (matched[..., :order] + _TINY) / (guessed[..., :order] + _SMALL)
        score = np.prod(precisions, axis=-1) ** (1.0 / order)
        ratio = (test_len + _TINY) / (ref_len + _SMALL)
        penalty = np.where(ratio < 1, np.exp(1 - 1 / np.minimum(ratio, 1.0)), 1.0)
        return np.asarray(score * penalty)
    return bleu


_AGGREGATES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "mean": _mean, "ratio": _ratio, **{f"bleu-{n}": _bleu(n) for n in range(1, 5)},
}


def as_array(scores: UnitScores) -> np.ndarray:
    return np.asarray(scores.values, dtype=np.float64)


def statistic(scores: UnitScores) -> Callable[[np.ndarray], np.ndarray]:
    """The metric of ``scores`` (times its scale) from an array of its units' values."""
    aggregate, scale = _AGGREGATES[scores.aggregate], scores.scale
    return lambda values: scale * aggregate(values)


def value(scores: UnitScores) -> float:
    """The metric over every unit: what the task reported, when its declaration is right."""
    return float(statistic(scores)(as_array(scores)))
