"""Percentile-bootstrap intervals, and the paired bootstrap of two runs' shared units that
abduct-report's paired tests start from (``abduct.host.paired_bootstrap``).

Every resampling draws whole units (``UnitScores``) and recomputes the metric with its own
aggregate, so a corpus metric is resampled as a corpus (its sufficient statistics summed over
the drawn units), never as a mean of per-unit scores. Each metric gets its own random stream,
derived from the run's seed and the metric's name: reproducible, and independent of which
other metrics a run reports.

Units with clusters (``UnitScores.clustered``) are summed within their cluster first, and the
clusters are resampled in the units' place: a mean becomes the ratio estimator, the drawn
clusters' summed values over the number of units they hold. Clusters of one unit each give the
unclustered numbers exactly (the same path).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from abduct._stats.aggregates import as_array, statistic
from abduct.contract.errors import DataError
from abduct.contract.units import UnitScores
from abduct.kit.cli import RESAMPLE_COUNT

LEVEL = 0.95
RESAMPLES = RESAMPLE_COUNT.default
_CELLS = 4_000_000  # floats per vectorised batch of resamples (about 32 MB)


def rng_for(seed: int, metric: str, purpose: str = "interval") -> np.random.Generator:
    """The stream of one metric's resampling: the interval's and, by ``purpose``, a paired
    test's bootstrap and permutation apart, so that each equals scipy's own call with this generator."""
    return np.random.default_rng([seed, zlib.crc32(metric.encode()), zlib.crc32(purpose.encode())])


class Bootstrap:
    """What the callers read of a bootstrap: its distribution and percentile interval."""

    def __init__(self, distribution: np.ndarray) -> None:
        self.bootstrap_distribution = distribution
        alpha = (1 - LEVEL) / 2
        self.confidence_interval = tuple(np.percentile(distribution, [100 * alpha, 100 * (1 - alpha)]))


def bootstrap(fn: Callable[[np.ndarray], np.ndarray], n: int, width: int, resamples: int,
              rng: np.random.Generator) -> Bootstrap:
    """scipy.stats.bootstrap's percentile method over unit indices, draw for draw (the tests
    check it against scipy's to 1e-9), written out so that an evaluation does not pay
    scipy.stats's import, which costs more than the resampling itself."""
    batch, parts = max(1, _CELLS // max(1, n * width)), []
    for start in range(0, resamples, batch):
        parts.append(np.asarray(fn(rng.integers(0, n, (min(batch, resamples - start), n)))))
    return Bootstrap(np.concatenate(parts))


def by_cluster(scores: UnitScores, values: np.ndarray, clusters: Sequence[str]
               ) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """The rows a bootstrap draws, ``values`` summed within their cluster (in first-seen order;
    a mean's as (sum, units)), and the metric of the rows an index array draws; ``values`` and
    the metric as they are when no cluster holds two units."""
    index: dict[str, int] = {}
    codes = [index.setdefault(c, len(index)) for c in clusters]
    compute = statistic(scores)
    if len(index) in (0, len(values)):
        return values, lambda drawn: compute(values[drawn])
    rows = np.stack([values, np.ones(len(values))], axis=-1) if scores.aggregate == "mean" else values
    sums = np.zeros((len(index), *rows.shape[1:]))
    np.add.at(sums, np.asarray(codes), rows)
    if scores.aggregate != "mean":
        return sums, lambda drawn: compute(sums[drawn])
    total, units, scale = sums[:, 0].copy(), sums[:, 1].copy(), scores.scale  # contiguous: two fast gathers
    return sums, lambda drawn: np.asarray(scale * total[drawn].sum(axis=-1) / units[drawn].sum(axis=-1))


def cluster_summary(scores: UnitScores) -> dict[str, Any]:
    """What results.json and a paired test say of the clusters, beside the units."""
    return {"clustered_by": scores.cluster, "clusters": len(set(scores.clusters))} if scores.cluster else {}


def interval(scores: UnitScores, resamples: int, seed: int, metric: str) -> dict[str, Any] | None:
    """The metric's 95% percentile-bootstrap interval over its units (their clusters, if any);
    None under two units or clusters."""
    rows, figure = by_cluster(scores, as_array(scores), scores.clusters)
    n = len(rows)
    if n < 2 or resamples < 1:
        return None
    result = bootstrap(figure, n, rows[0].size, resamples, rng_for(seed, metric))
    low, high = result.confidence_interval
    method = f"percentile bootstrap; {scores.note}" if scores.note else "percentile bootstrap"
    return {"low": float(low), "high": float(high), "level": LEVEL, "method": method,
            "resamples": resamples, "unit": scores.unit, "units": len(scores.ids), **cluster_summary(scores)}


def shared(first: UnitScores, other: UnitScores) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Both runs' values on the units both scored, in the first run's order."""
    where = {unit: i for i, unit in enumerate(other.ids)}
    ids = [unit for unit in first.ids if unit in where]
    own = {unit: i for i, unit in enumerate(first.ids)}
    a, b = (np.asarray(scores.values, dtype=np.float64) for scores in (first, other))
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


@dataclass(frozen=True)
class Paired:
    """Two runs' shared units resampled together: ``other`` minus ``first``, its 95% interval
    and bootstrap distribution, and the rows the resampling drew (per run, summed within their
    clusters where there are any; a mean's as (sum, units)), for a test on the same pairs."""

    difference: float
    low: float
    high: float
    distribution: np.ndarray
    first: np.ndarray
    other: np.ndarray
    units: int  # shared units (the rows are clusters when fewer)
    clusters: dict[str, Any]  # what results.json says of the clusters: {} or clustered_by, clusters


def paired_bootstrap(first: UnitScores, other: UnitScores, resamples: int, seed: int, metric: str) -> Paired | None:
    """The paired bootstrap of ``other`` minus ``first`` on their shared units, resampling whole
    clusters where either run declares them (DataError when the two runs' clusters differ), each
    draw recomputing the metric with its own aggregate on both runs; its stream is the metric's
    ``paired`` one (``abduct.host.interval_rng``). None under two shared units or clusters."""
    a, b, ids = shared(first, other)
    units = len(ids)
    if units < 2 or resamples < 1:
        return None
    grouped = shared_clusters(first, other, ids, metric)
    difference = float(statistic(other)(b) - statistic(first)(a))
    a, figure_a = by_cluster(first, a, grouped.clusters)
    b, figure_b = by_cluster(other, b, grouped.clusters)
    n = len(a)
    if n < 2:
        return None
    boot = bootstrap(lambda index: figure_b(index) - figure_a(index), n, a[0].size + b[0].size, resamples,
                     rng_for(seed, metric, "paired"))
    low, high = (float(x) for x in boot.confidence_interval)
    return Paired(difference, low, high, np.asarray(boot.bootstrap_distribution), a, b, units, cluster_summary(grouped))
