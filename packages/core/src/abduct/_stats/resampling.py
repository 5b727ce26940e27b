"""Percentile-bootstrap intervals, and the bootstrap that abduct-report's paired tests draw
through (``abduct.host.bootstrap``).

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
from typing import Any

import numpy as np

from abduct._stats.aggregates import as_array, statistic
from abduct.contract.units import UnitScores

LEVEL = 0.95
RESAMPLES = 1000
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
