"""Which way each reported number is better, its range and its chance level.

A task declares, for the metrics it reports, a ``metric_info`` mapping (a class attribute,
or an instance attribute when it depends on the task's options)::

    class MyTask:
        metric_info = {
            "accuracy": percent(chance=25.0),           # 4-way choice: random gets 25
            "mean_rank": lower(chance=None),            # lower is better
            "by_*.*.accuracy": percent(chance=25.0),    # every per-group table
            "n": COUNT,                                 # a size, neither better nor worse
        }

Keys are metric names as ``report.md`` shows them: nested tables flattened with dots
(``by_type.hamlet.accuracy``). A key may hold ``*`` (``fnmatch``: it also matches dots), so
one line covers every group of a breakdown; an exact key wins over a pattern, and among
patterns the first declared that matches. ``Evaluation.metric_info`` adds declarations that
depend on what ran (e.g. optional metrics), over the task's.

``results.json`` carries ``"metric_info": {metric: {"better": "higher" | "lower" | null,
"range": [lo, hi] | null, "chance": float | null}}`` for every numeric metric the task
declared; ``better`` is null for figures that do not rate the model: counts and reference
points such as a human or oracle score (``COUNT``, ``reference``). ``report.md`` and the demo
tables show ↑ / ↓.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Better = Literal["higher", "lower"]
ARROWS = {"higher": "↑", "lower": "↓"}


@dataclass(frozen=True)
class MetricInfo:
    """``better``: the direction (None: a count or a reference figure, which rate no
    model); ``range``: the values the
    metric can take (``hi`` None when unbounded above); ``chance``: what a uniformly random
    model gets in expectation (None when it depends on the data or is unknown)."""

    better: Better | None
    range: tuple[float, float | None] | None = None
    chance: float | None = None

    @property
    def arrow(self) -> str:
        """↑ (higher is better), ↓ (lower is better), or "" for a count."""
        return ARROWS.get(self.better or "", "")

    def as_json(self) -> dict[str, Any]:
        return {"better": self.better, "range": None if self.range is None else list(self.range),
                "chance": self.chance}

    def with_chance(self, chance: float | None) -> MetricInfo:
        return MetricInfo(self.better, self.range, chance)


def higher(lo: float = 0.0, hi: float | None = None, *, chance: float | None = None) -> MetricInfo:
    """Higher is better, values in [lo, hi] (hi None: unbounded)."""
    return MetricInfo("higher", (lo, hi), chance)


def lower(lo: float = 0.0, hi: float | None = None, *, chance: float | None = None) -> MetricInfo:
    """Lower is better, values in [lo, hi] (hi None: unbounded)."""
    return MetricInfo("lower", (lo, hi), chance)


def percent(*, chance: float | None = None) -> MetricInfo:
    """A percentage where higher is better (accuracy x 100)."""
    return higher(0.0, 100.0, chance=chance)


COUNT = MetricInfo(None, (0.0, None), None)
"""A count (``n``, ``instances``, ``ties``): neither better nor worse."""


def reference(lo: float = 0.0, hi: float | None = None) -> MetricInfo:
    """A figure reported beside the model's that does not rate it (a human or oracle score,
    the chance level itself)."""
    return MetricInfo(None, (lo, hi), None)

# The corpus values of the text metrics (``abduct-metrics`` and the core's exact match), by
# the key ``MetricResult.corpus`` uses, so that the tasks that report them declare them alike.
TEXT_METRICS: dict[str, MetricInfo] = {
    **{f"bleu_{n}": higher(0.0, 1.0) for n in range(1, 5)},
    "meteor": higher(0.0, 1.0),
    "rouge_l": higher(0.0, 1.0),
    "cider": higher(0.0, 10.0),  # CIDEr-D: 10 x the mean clipped cosine, at most 10
    # BERTScore without rescaling is a cosine similarity; rescaled values can leave [0, 1].
    **{f"bertscore_{k}": higher(-1.0, 1.0) for k in ("precision", "recall", "f1")},
    "bem": higher(0.0, 1.0),
    "exact_match": higher(0.0, 1.0),
}


def flatten(metrics: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted name, value)`` of every leaf of nested metric tables, in order."""
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from flatten(value, name + ".")
        else:
            yield name, value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def lookup(declared: Mapping[str, MetricInfo], name: str) -> MetricInfo | None:
    """The declaration for the dotted metric ``name``: the exact key, else the first pattern."""
    if name in declared:
        return declared[name]
    for key, info in declared.items():
        if "*" in key and fnmatch.fnmatchcase(name, key):
            return info
    return None


def declared_info(
    task_info: Mapping[str, MetricInfo], extra: Mapping[str, MetricInfo] | None = None
) -> dict[str, MetricInfo]:
    """A task's ``metric_info`` with ``extra`` (an evaluation's own) taking precedence."""
    merged = dict(extra or {})  # first, so that its patterns are tried before the task's
    for key, info in task_info.items():
        merged.setdefault(key, info)
    return merged


def resolve(declared: Mapping[str, MetricInfo], metrics: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``(metric_info for results.json, numeric metrics nobody declared)``."""
    found: dict[str, Any] = {}
    missing: list[str] = []
    for name, value in flatten(metrics):
        if not _is_number(value):
            continue
        info = lookup(declared, name)
        if info is None:
            missing.append(name)
        else:
            found[name] = info.as_json()
    return found, missing


def arrow_of(metric_info: Mapping[str, Any], name: str) -> str:
    """↑ / ↓ for ``name`` from results.json's ``metric_info`` block ("" when unknown or a count)."""
    entry = metric_info.get(name)
    return ARROWS.get(str(entry.get("better")), "") if isinstance(entry, Mapping) else ""
