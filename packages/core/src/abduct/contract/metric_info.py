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

``results.json`` records each numeric metric's declaration, and lists apart the numbers nobody
declared; ``report.md`` and the demo tables show ↑ / ↓. ``better`` is None for figures that do
not rate the model: counts and reference points such as a human or oracle score (``COUNT``,
``reference``).
"""

from __future__ import annotations

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
# Every one is x100, the scale of the papers' tables (docs/reading-the-numbers.md).
TEXT_METRICS: dict[str, MetricInfo] = {
    **{f"bleu_{n}": higher(0.0, 100.0) for n in range(1, 5)},
    "meteor": higher(0.0, 100.0),
    "rouge_l": higher(0.0, 100.0),
    "cider": higher(0.0, 1000.0),  # CIDEr-D: 10 x the mean clipped cosine, at most 10, so 1000
    # BERTScore without rescaling is a cosine similarity; rescaled values can leave [0, 100].
    **{f"bertscore_{k}": higher(-100.0, 100.0) for k in ("precision", "recall", "f1")},
    "bem": higher(0.0, 100.0),
    "exact_match": higher(0.0, 100.0),
}
