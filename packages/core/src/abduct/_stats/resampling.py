"""Percentile-bootstrap intervals, paired tests and Holm's correction.

Every resampling draws whole units (``UnitScores``) and recomputes the metric with its own
aggregate, so a corpus metric is resampled as a corpus (its sufficient statistics summed over
the drawn units), never as a mean of per-unit scores. Each metric gets its own random stream,
derived from the run's seed and the metric's name: reproducible, and independent of which
other metrics a run reports. The sign-flip test is scipy.stats.permutation_test's.
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
    """The stream of one metric's resampling: the interval's and the permutation test's apart,
    so that each equals scipy's own call with this generator."""
    return np.random.default_rng([seed, zlib.crc32(metric.encode()), zlib.crc32(purpose.encode())])


def _batch(n: int, width: int) -> int:
    return max(1, _CELLS // max(1, n * width))


class _Bootstrap:
    """What the callers read of a bootstrap: its distribution and percentile interval."""

    def __init__(self, distribution: np.ndarray) -> None:
        self.bootstrap_distribution = distribution
        alpha = (1 - LEVEL) / 2
        self.confidence_interval = tuple(np.percentile(distribution, [100 * alpha, 100 * (1 - alpha)]))


def _bootstrap(fn: Callable[[np.ndarray], np.ndarray], n: int, width: int, resamples: int,
               rng: np.random.Generator) -> _Bootstrap:
    """scipy.stats.bootstrap's percentile method over unit indices, draw for draw (the tests
    check it against scipy's to 1e-9), written out so that an evaluation does not pay
    scipy.stats's import, which costs more than the resampling itself."""
    batch, parts = _batch(n, width), []
    for start in range(0, resamples, batch):
        parts.append(np.asarray(fn(rng.integers(0, n, (min(batch, resamples - start), n)))))
    return _Bootstrap(np.concatenate(parts))


def interval(scores: UnitScores, resamples: int, seed: int, metric: str) -> dict[str, Any] | None:
    """The metric's 95% percentile-bootstrap interval over its units; None under two units."""
    values = as_array(scores)
    n = len(values)
    if n < 2 or resamples < 1:
        return None
    compute = statistic(scores)
    result = _bootstrap(lambda index: compute(values[index]), n, values[0].size, resamples, rng_for(seed, metric))
    low, high = result.confidence_interval
    method = f"percentile bootstrap; {scores.note}" if scores.note else "percentile bootstrap"
    return {"low": float(low), "high": float(high), "level": LEVEL, "method": method,
            "resamples": resamples, "unit": scores.unit, "units": n}


def shared(first: UnitScores, other: UnitScores) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Both runs' values on the units both scored, in the first run's order."""
    where = {unit: i for i, unit in enumerate(other.ids)}
    ids = [unit for unit in first.ids if unit in where]
    own = {unit: i for i, unit in enumerate(first.ids)}
    a, b = as_array(first), as_array(other)
    return a[[own[u] for u in ids]], b[[where[u] for u in ids]], ids


def paired_test(first: UnitScores, other: UnitScores, resamples: int, seed: int, metric: str) -> dict[str, Any] | None:
    """``other`` minus ``first`` on their shared units: the difference, its 95% paired-bootstrap
    interval and a two-sided p-value (sign-flip permutation for per-unit means, paired
    bootstrap for corpus aggregates). None under two shared units."""
    from scipy import stats  # type: ignore[import-untyped]

    a, b, ids = shared(first, other)
    n = len(ids)
    if n < 2 or resamples < 1:
        return None
    fa, fb = statistic(first), statistic(other)
    difference = float(fb(b) - fa(a))
    boot = _bootstrap(lambda index: fb(b[index]) - fa(a[index]), n, 2 * a[0].size, resamples,
                      rng_for(seed, metric, "paired"))
    low, high = (float(x) for x in boot.confidence_interval)
    if first.aggregate == "mean" and other.aggregate == "mean":
        scale_a, scale_b = first.scale, other.scale

        def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
            return np.asarray(scale_b * y.mean(axis=axis) - scale_a * x.mean(axis=axis))

        result = stats.permutation_test((a, b), mean_difference, permutation_type="samples", vectorized=True,
                                        n_resamples=resamples, alternative="two-sided",
                                        rng=rng_for(seed, metric, "permutation"))
        p_value, test = float(result.pvalue), "sign-flip permutation"
    else:  # how often a resampled difference lies at least as far from the observed one as it from 0
        spread = np.abs(np.asarray(boot.bootstrap_distribution) - difference)
        extreme = int(np.sum(spread >= abs(difference) - 1e-12 * max(1.0, abs(difference))))
        p_value, test = (1 + extreme) / (1 + resamples), "paired bootstrap"
    return {"difference": difference, "low": low, "high": high, "p_value": min(1.0, p_value), "test": test,
            "units": n, "unit": first.unit, "resamples": resamples}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values, in their order."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
