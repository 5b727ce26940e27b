"""Paired tests of two runs on the units both scored, and Holm's correction of a family of them.

A paired test resamples whole units, as the core's intervals do (``abduct.host.bootstrap``),
with the metric recomputed by its own aggregate on both runs' draws. The p-value of a per-unit
mean is scipy.stats.permutation_test's sign flip; a corpus aggregate's is the paired
bootstrap's. Units with clusters (``UnitScores.clustered``) are summed within their cluster
first, and the clusters are resampled and sign-flipped in the units' place: a mean becomes the
ratio estimator, the drawn clusters' summed values over the number of units they hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from abduct import DataError, UnitScores
from abduct.host import bootstrap, by_cluster, cluster_summary, interval_rng, metric_of_rows, unit_values


def shared(first: UnitScores, other: UnitScores) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Both runs' values on the units both scored, in the first run's order."""
    where = {unit: i for i, unit in enumerate(other.ids)}
    ids = [unit for unit in first.ids if unit in where]
    own = {unit: i for i, unit in enumerate(first.ids)}
    a, b = unit_values(first), unit_values(other)
    return a[[own[u] for u in ids]], b[[where[u] for u in ids]], ids


def shared_clusters(first: UnitScores, other: UnitScores, ids: Sequence[str], metric: str) -> UnitScores:
    """The clusters of the shared ``ids`` (units only, no values), from whichever run declares
    them; DataError when both do and they group the units differently."""
    declared = [s for s in (first, other) if s.cluster]
    labels = [dict(zip(s.ids, s.clusters)) for s in declared]
    if len(declared) == 2:
        if first.cluster != other.cluster:
            raise DataError(f"the units of '{metric}' are clustered by {first.cluster} in the first run, "
                            f"by {other.cluster} in this one")
        runs = ("the first run", "this one")
        seen: tuple[dict[str, tuple[str, str]], ...] = ({}, {})  # per run: cluster -> (its first unit, the other's)
        for unit in ids:
            x, y = labels[0][unit], labels[1][unit]
            for side, (mine, theirs) in enumerate(((x, y), (y, x))):
                earlier, where = seen[side].setdefault(mine, (unit, theirs))
                if where != theirs:
                    raise DataError(f"the units of '{metric}' are clustered differently: '{earlier}' and '{unit}' "
                                    f"share {first.cluster} '{mine}' in {runs[side]}, not in {runs[1 - side]}")
    return UnitScores(first.unit, tuple(ids), (), cluster=declared[0].cluster if declared else "",
                      clusters=tuple(labels[0][u] for u in ids) if declared else ())


def paired_test(first: UnitScores, other: UnitScores, resamples: int, seed: int, metric: str) -> dict[str, Any] | None:
    """``other`` minus ``first`` on their shared units: the difference, its 95% paired-bootstrap
    interval and a two-sided p-value (sign-flip permutation for per-unit means, paired
    bootstrap for corpus aggregates), resampling and flipping whole clusters where either run
    declares them (DataError when the two runs' clusters differ). None under two shared units
    or clusters."""
    from scipy import stats  # type: ignore[import-untyped]

    a, b, ids = shared(first, other)
    units = len(ids)
    if units < 2 or resamples < 1:
        return None
    grouped = shared_clusters(first, other, ids, metric)
    difference = float(metric_of_rows(other)(b) - metric_of_rows(first)(a))
    a, figure_a = by_cluster(first, a, grouped.clusters)
    b, figure_b = by_cluster(other, b, grouped.clusters)
    n = len(a)
    if n < 2:
        return None
    boot = bootstrap(lambda index: figure_b(index) - figure_a(index), n, a[0].size + b[0].size, resamples,
                     interval_rng(seed, metric, "paired"))
    low, high = (float(x) for x in boot.confidence_interval)
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
        spread = np.abs(np.asarray(boot.bootstrap_distribution) - difference)
        extreme = int(np.sum(spread >= abs(difference) - 1e-12 * max(1.0, abs(difference))))
        p_value, test = (1 + extreme) / (1 + resamples), "paired bootstrap"
    return {"difference": difference, "low": low, "high": high, "p_value": min(1.0, p_value), "test": test,
            "units": units, "unit": first.unit, "resamples": resamples, **cluster_summary(grouped)}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values, in their order."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
