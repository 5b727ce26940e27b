"""A task's per-unit data (``Evaluation.units``, ``abduct.contract.units``) checked as declared,
before the runner recomputes each metric from it and writes units.json."""

from __future__ import annotations

from collections.abc import Mapping

from abduct.contract.errors import PluginError
from abduct.contract.units import AGGREGATES, UnitScores

BLEU_COLUMNS = 10  # hypothesis length, reference length, guessed 1..4-grams, matched 1..4-grams
# How many numbers each unit holds, by aggregate: 0 for a single number, else the row's length.
WIDTHS = {"mean": 0, "ratio": 2, **{f"bleu-{n}": BLEU_COLUMNS for n in range(1, 5)}}
assert set(WIDTHS) == set(AGGREGATES)  # a new aggregate needs its width here


def check_units(units: object, owner: str) -> dict[str, UnitScores]:
    """``units`` as declared, its shape checked; PluginError naming ``owner`` and the metric otherwise."""
    if not isinstance(units, Mapping) or not all(isinstance(v, UnitScores) for v in units.values()):
        raise PluginError(f"{owner} returned Evaluation.units that is not a mapping of UnitScores")
    for metric, scores in units.items():
        where = f"{owner}: units of metric '{metric}'"
        if scores.aggregate not in AGGREGATES:
            raise PluginError(f"{where}: unknown aggregate '{scores.aggregate}' (known: {', '.join(AGGREGATES)})")
        if len(scores.ids) != len(scores.values):
            raise PluginError(f"{where}: {len(scores.ids)} ids for {len(scores.values)} values")
        if len(set(scores.ids)) != len(scores.ids):
            raise PluginError(f"{where}: unit ids repeat")
        width = WIDTHS[scores.aggregate]
        bad = next((i for i, v in zip(scores.ids, scores.values)
                    if (len(v) if isinstance(v, tuple) else 0) != width), None)
        if bad is not None:
            shape = "a number" if width == 0 else f"a row of {width} statistics"
            raise PluginError(f"{where}: unit '{bad}' is not {shape}")
        if (scores.cluster or scores.clusters) and (not scores.cluster or len(scores.clusters) != len(scores.ids)):
            raise PluginError(f"{where}: {len(scores.clusters)} clusters for {len(scores.ids)} units "
                              f"(cluster '{scores.cluster}')")
        if "" in scores.clusters:
            raise PluginError(f"{where}: unit '{scores.ids[scores.clusters.index('')]}' has no {scores.cluster}")
    return dict(units)
