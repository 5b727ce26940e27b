"""What tasks that share a shape write in ``finish`` and ``view``: accuracy over choices, the
first maximal index, the strict win of a two-way comparison, the run's metrics over generations,
and the pieces of a sample view (candidates with the model's scores and ranks, the gold's margin).
The runner answers the requests themselves (``Choose``, ``Compare``, ``Generate``, ``Judge``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from abduct.contract.protocols import Metric, MetricResult
from abduct.contract.stages import Candidate, Choice, Generated, GenerationItem, TwoWay

__all__ = ["Candidate", "Choice", "GenerationItem", "TwoWay", "accuracy", "batched", "first_argmax",
           "ranks", "score_generations", "scored_texts", "strictly_higher"]


class MetricSource(Protocol):
    """Where a task gets the run's metrics: its ``RunInfo``."""

    def metric(self, name: str, **options: Any) -> Metric: ...


def batched(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


# -- multiple choice ------------------------------------------------------------------------


def first_argmax(scores: Sequence[float] | np.ndarray) -> int:
    """Index of the maximum; ties go to the first maximal index."""
    return int(np.argmax(np.asarray(scores, dtype=np.float64)))


def accuracy(records: Sequence[Any]) -> float:
    """100 x the share of records marked ``correct`` (0.0 for none): ``Chosen`` or ``Compared``
    results, or dicts with a ``"correct"`` key (a ``Custom`` step's, a task's own)."""
    marks = [r["correct"] if isinstance(r, Mapping) else r.correct for r in records]
    return 100.0 * float(np.mean([bool(m) for m in marks])) if marks else 0.0


# -- two-way comparison ---------------------------------------------------------------------


def strictly_higher(scores: Sequence[float], gold: int) -> bool:
    """The gold candidate wins only by a strictly higher score: a tie counts 0."""
    return bool(scores[gold] > scores[1 - gold])


# -- generate, then score -------------------------------------------------------------------


def score_generations(
    run: MetricSource, records: Sequence[Generated], metrics: Mapping[str, Mapping[str, Any]],
    keep: dict[str, MetricResult] | None = None,
) -> dict[str, Any]:
    """Corpus values of each metric (``{name: options}``) over a ``Generate`` stage's records, keyed
    ``name`` when the metric reports one value and ``name.value`` when it reports several.
    ``keep`` receives each metric's whole result by name (per-sample values: intervals)."""
    predictions = {str(r.id): r.prediction for r in records}
    references = {str(r.id): list(r.references) for r in records}
    out: dict[str, Any] = {}
    for name, options in metrics.items():
        result = run.metric(name, **options).compute(predictions, references)
        if keep is not None:
            keep[name] = result
        values = dict(result.corpus)
        if len(values) == 1:
            out[name] = float(next(iter(values.values())))
        else:
            out.update({f"{name}.{key}": float(value) for key, value in values.items()})
    return out

def ranks(scores: Sequence[float]) -> list[int]:
    """1 for the highest score; a tie goes to the earlier candidate (as ``first_argmax`` picks)."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    out = [0] * len(scores)
    for rank, i in enumerate(order, start=1):
        out[i] = rank
    return out


def scored_texts(name: str | Sequence[str], texts: Sequence[str], scores: Sequence[float] | None,
                 gold: int | Sequence[int] | None = None) -> list[dict[str, str]]:
    """One text block per candidate: ``"{name} {k} · score s · rank r · gold"`` (k from 1), or
    each candidate's own name when ``name`` is a list."""
    golds = {gold} if isinstance(gold, int) else set(gold or ())
    ranked = ranks(scores) if scores is not None else []
    out = []
    for i, text in enumerate(texts):
        label = f"{name} {i + 1}" if isinstance(name, str) else name[i]
        if scores is not None and i < len(scores):
            label += f" · score {scores[i]:.4g} · rank {ranked[i]}"
        out.append({"label": label + (" · gold" if i in golds else ""), "text": text})
    return out
