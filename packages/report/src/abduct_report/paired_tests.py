"""Paired tests of two runs on the units both scored, and Holm's correction of a family of them.

A paired test resamples whole units, as the core's intervals do: the difference, its interval
and the rows drawn are the core's paired bootstrap (``abduct.host.paired_bootstrap``), with the
metric recomputed by its own aggregate on both runs' draws. The p-value of a per-unit
mean is scipy.stats.permutation_test's sign flip; a corpus aggregate's is the paired
bootstrap's. Units with clusters (``UnitScores.clustered``) are summed within their cluster
first, and the clusters are resampled and sign-flipped in the units' place: a mean becomes the
ratio estimator, the drawn clusters' summed values over the number of units they hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from abduct import UnitScores
from abduct.host import interval_rng, paired_bootstrap


def paired_test(first: UnitScores, other: UnitScores, resamples: int, seed: int, metric: str) -> dict[str, Any] | None:
    """``other`` minus ``first`` on their shared units: the difference, its 95% paired-bootstrap
    interval and a two-sided p-value (sign-flip permutation for per-unit means, paired
    bootstrap for corpus aggregates), resampling and flipping whole clusters where either run
    declares them (DataError when the two runs' clusters differ). None under two shared units
    or clusters."""
    from scipy import stats  # type: ignore[import-untyped]

    paired = paired_bootstrap(first, other, resamples, seed, metric)
    if paired is None:
        return None
    a, b, n, units, difference = paired.first, paired.other, len(paired.first), paired.units, paired.difference
    if first.aggregate == "mean" and other.aggregate == "mean":
        scale_a, scale_b = first.scale, other.scale
        if n < units:  # clusters: each run's summed values; swapping a pair flips a cluster's units together
            a, b = a[:, 0], b[:, 0]

        def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
            if n < units:  # the ratio estimator: summed values over the (fixed) number of shared units
                return np.asarray((scale_b * y.sum(axis=axis) - scale_a * x.sum(axis=axis)) / units)
            return np.asarray(scale_b * y.mean(axis=axis) - scale_a * x.mean(axis=axis))

        result = stats.permutation_test((a, b), mean_difference, permutation_type="samples", vectorized=True,
                                        n_resamples=resamples, alternative="two-sided",
                                        rng=interval_rng(seed, metric, "permutation"))
        p_value, test = float(result.pvalue), "sign-flip permutation"
    else:  # how often a resampled difference lies at least as far from the observed one as it from 0
        spread = np.abs(paired.distribution - difference)
        extreme = int(np.sum(spread >= abs(difference) - 1e-12 * max(1.0, abs(difference))))
        p_value, test = (1 + extreme) / (1 + resamples), "paired bootstrap"
    return {"difference": difference, "low": paired.low, "high": paired.high, "p_value": min(1.0, p_value),
            "test": test, "units": units, "unit": first.unit, "resamples": resamples, **paired.clusters}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values, in their order."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
