"""The official NL-EYE figures, from per-sample choices or scores (x100), with tables.

- triplet: ``order1`` is the hypothesis (1 or 2) chosen when shown in the file's order,
  ``order2`` the one chosen when shown swapped (None when a generator's answer could not be
  parsed: wrong). ``consistency_accuracy``: both equal the gold; ``order1_accuracy`` /
  ``order2_accuracy``: each alone. Random = 25 / 50 / 50.
- pairs: one score per (premise, hypothesis); ``accuracy``: the gold's score is strictly
  higher (a tie counts 0).

Every metric is broken down by ``reasoning_category``, ``domain``, ``time_direction`` and
``time_duration`` (``by_<field>: {value: {metric: x, n: count}}``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import DataError, UnitScores
from abduct.kit import read_keyed_predictions
from abduct_nleye.loader import parse_gold
from abduct_nleye.records import CATEGORY_FIELDS, NleyeSample


def _percent(values: Sequence[bool]) -> float:
    return 100.0 * sum(values) / len(values) if values else 0.0


def triplet_values(rows: Sequence[tuple[int, int | None, int | None]]) -> dict[str, Any]:
    """``rows``: (gold, order1, order2) per sample."""
    return {"consistency_accuracy": _percent([a == g and b == g for g, a, b in rows]),
            "order1_accuracy": _percent([a == g for g, a, _ in rows]),
            "order2_accuracy": _percent([b == g for g, _, b in rows]), "n": len(rows)}


def pairs_values(rows: Sequence[tuple[int, float, float]]) -> dict[str, Any]:
    """``rows``: (gold, score_h1, score_h2) per sample."""
    return {"accuracy": _percent([(s1 > s2) if g == 1 else (s2 > s1) for g, s1, s2 in rows]),
            "ties": sum(1 for _, s1, s2 in rows if s1 == s2), "n": len(rows)}


def with_tables(samples: Sequence[NleyeSample], rows: Mapping[str, Any],
                values: Callable[[list[Any]], dict[str, Any]]) -> dict[str, Any]:
    """``values`` over every sample, then per value of each category field."""
    out = values([rows[s.sample_id] for s in samples])
    for name in CATEGORY_FIELDS:
        groups: dict[str, list[Any]] = {}
        for s in samples:
            groups.setdefault(s.categories.get(name, ""), []).append(rows[s.sample_id])
        out[f"by_{name}"] = {k: values(groups[k]) for k in sorted(groups)}
    return out


def by_category(samples: Sequence[NleyeSample], units: Mapping[str, UnitScores]) -> dict[str, UnitScores]:
    """``units`` and those of their category tables (``with_tables``: the same figure on a group)."""
    groups = {f"by_{name}": {s.sample_id: s.categories.get(name, "") for s in samples} for name in CATEGORY_FIELDS}
    return {**units, **{k: v for metric, scores in units.items() for k, v in scores.breakdown(metric, groups).items()}}


def _entries(path: Path, samples: Sequence[NleyeSample]) -> dict[str, Any]:
    data = read_keyed_predictions(path, [s.sample_id for s in samples], shape="{sample_id: [..]}", noun="sample")
    for key, value in data.items():
        if not isinstance(value, list) or len(value) != 2:
            got = f"{len(value)} values" if isinstance(value, list) else type(value).__name__
            raise DataError(f"expected a list of 2 values, got {got}", file=path, record=key)
    return data


def score_triplet_file(path: Path, samples: Sequence[NleyeSample]) -> dict[str, Any]:
    """``{sample_id: [a, b]}``: ``a``, ``b`` are 1 or 2 (or ``"hypothesis1"``/``"hypothesis2"``)."""
    data = _entries(path, samples)
    rows: dict[str, tuple[int, int | None, int | None]] = {}
    for s in samples:
        picks = []
        for k, value in enumerate(data[s.sample_id]):
            pick = parse_gold(str(value)) if isinstance(value, int | str) and not isinstance(value, bool) else None
            if pick is None:
                raise DataError(f"expected 1 or 2, got {value!r}", file=path, record=s.sample_id,
                                field=("order1", "order2")[k])
            picks.append(pick)
        rows[s.sample_id] = (s.gold, picks[0], picks[1])
    return with_tables(samples, rows, triplet_values)


def score_pairs_file(path: Path, samples: Sequence[NleyeSample]) -> dict[str, Any]:
    """``{sample_id: [score_h1, score_h2]}``: finite numbers."""
    data = _entries(path, samples)
    rows: dict[str, tuple[int, float, float]] = {}
    for s in samples:
        scores = []
        for k, value in enumerate(data[s.sample_id]):
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise DataError(f"expected a finite number, got {value!r}", file=path, record=s.sample_id,
                                field=f"score_h{k + 1}")
            scores.append(float(value))
        rows[s.sample_id] = (s.gold, scores[0], scores[1])
    return with_tables(samples, rows, pairs_values)
