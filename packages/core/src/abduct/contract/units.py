"""The per-unit data behind a metric: what its confidence interval and paired tests resample.

A task that can say what its official figure averages over returns, in ``Evaluation.units``,
one ``UnitScores`` per metric (flattened name, as report.md shows it)::

    Evaluation(metrics={"accuracy": 61.0, ...}, predictions=records,
               units={"accuracy": UnitScores.means("instance", {r["id"]: r["correct"] for r in records})})

Each unit has an id that stays the same across runs of the same data (paired tests in
``abduct compare`` match runs on it) and either

- one number, with ``aggregate="mean"``: the metric is ``scale`` x the mean of the values
  (accuracy: 0/1 correctness x 100; a mean rank: the rank, scale 1); or
- two numbers ``[numerator, denominator]``, with ``aggregate="ratio"``: the metric is ``scale``
  x the ratio of their sums (a share pooled over items, resampled by the unit that owns them:
  WHOOPS!' comparisons by image); or
- a row of sufficient statistics, with a corpus aggregate (``"bleu-1"`` ... ``"bleu-4"``: the
  row is ``[hypothesis length, closest reference length, guessed 1..4-grams, matched 1..4-grams]``
  and the metric is ``scale`` x BLEU of their sums, as pycocoevalcap computes it).

``pooled`` sums per-sample rows within the unit that owns them (a video example's events, an
image's questions): a mean over samples resampled by unit is the ``ratio`` of (sum, count).
``note`` states an approximation the interval makes (CIDEr-D's document frequencies held at
the full set's); the interval's ``method`` carries it.

``clustered(cluster, cluster_of)`` names, when units are not independent, the larger thing
each belongs to (a video's questions, an image's instances): the interval then resamples whole
clusters and the paired test flips all of a cluster's units together. Without it each unit is
its own cluster, as before::

    UnitScores.means("question", {q.id: q.right for q in qs}).clustered("video", {q.id: q.video for q in qs})

The runner recomputes each metric from its units and refuses a declaration that does not
reproduce the reported value, so an interval always brackets the number shown beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

AGGREGATES = ("mean", "ratio", "bleu-1", "bleu-2", "bleu-3", "bleu-4")  # what each row holds: see above


@dataclass(frozen=True)
class UnitScores:
    """``unit``: what one entry is, in words ("instance", "triplet (both orders)"); ``ids`` and
    ``values`` one per unit (a number for ``mean``, a statistics row for a corpus aggregate);
    ``cluster``: what a cluster is ("video"), ``clusters`` each unit's, in step with ``ids``
    (both empty: every unit its own cluster)."""

    unit: str
    ids: tuple[str, ...]
    values: tuple[Any, ...]
    aggregate: str = "mean"
    scale: float = 1.0
    note: str = ""
    cluster: str = ""
    clusters: tuple[str, ...] = ()

    @classmethod
    def means(cls, unit: str, values: Mapping[Any, float | bool], scale: float = 100.0, note: str = "") -> UnitScores:
        """A metric that is ``scale`` x the mean of per-unit numbers (booleans count 0/1)."""
        return cls(unit, tuple(str(k) for k in values), tuple(float(v) for v in values.values()), "mean", scale, note)

    @classmethod
    def ratio(cls, unit: str, rows: Mapping[Any, tuple[float, float]], scale: float = 100.0) -> UnitScores:
        """A metric that is ``scale`` x sum(numerators) / sum(denominators) over the units."""
        return cls.corpus(unit, "ratio", rows, scale)

    @classmethod
    def corpus(cls, unit: str, aggregate: str, rows: Mapping[Any, Sequence[float]], scale: float = 1.0) -> UnitScores:
        """A corpus metric recomputed from per-unit sufficient statistics (``AGGREGATES``)."""
        return cls(unit, tuple(str(k) for k in rows), tuple(tuple(float(x) for x in r) for r in rows.values()),
                   aggregate, scale)

    @classmethod
    def pooled(cls, unit: str, aggregate: str, rows: Mapping[Any, Sequence[float]], unit_of: Mapping[Any, Any],
               scale: float = 1.0, note: str = "") -> UnitScores:
        """Per-sample rows (keyed like ``unit_of``) summed within their unit, units in first-seen order."""
        sums: dict[str, list[float]] = {}
        for sample, row in rows.items():
            total = sums.setdefault(str(unit_of[sample]), [0.0] * len(row))
            for i, x in enumerate(row):
                total[i] += float(x)
        return cls(unit, tuple(sums), tuple(tuple(r) for r in sums.values()), aggregate, scale, note)

    def clustered(self, cluster: str, cluster_of: Mapping[Any, Any]) -> UnitScores:
        """These units grouped by ``cluster`` ("video"), ``cluster_of`` giving each unit id's."""
        where = {str(k): str(v) for k, v in cluster_of.items()}
        return replace(self, cluster=cluster, clusters=tuple(where.get(i, "") for i in self.ids))

    def breakdown(self, metric: str, groups: Mapping[str, Mapping[Any, Any]]) -> dict[str, UnitScores]:
        """The units behind each group's figure of a breakdown that recomputes ``metric`` on the
        group's units: ``{"<by>.<group>.<metric>": UnitScores}``, ``groups`` giving each
        breakdown (``by_type``) the group of every unit id."""
        where = {unit: i for i, unit in enumerate(self.ids)}
        out: dict[str, UnitScores] = {}
        for by, group_of in groups.items():
            members: dict[str, list[int]] = {}
            for unit, group in group_of.items():
                if str(unit) in where:
                    members.setdefault(str(group), []).append(where[str(unit)])
            for group, index in members.items():
                out[f"{by}.{group}.{metric}"] = replace(self, ids=tuple(self.ids[i] for i in index),
                                                        values=tuple(self.values[i] for i in index),
                                                        clusters=tuple(self.clusters[i] for i in index if self.clusters))
        return out
