"""The shapes the benchmarks share, written once.

- **multiple choice**: K candidate texts per input, argmax, ties to the first maximal index
  (CoSIm; the example plugin);
- **two-way comparison**: which of two (input, text) candidates is more plausible; correct
  only when the gold one scores strictly higher, so a tie counts 0 (NL-EYE pairs, WHOOPS!
  matching);
- **generate, then score**: one text per request through the generation engine, then the
  run's metrics against references (Sherlock generation, VAR, WHOOPS! captioning);
- **sample views**: the pieces of a task's ``sample_view`` (what ``samples.html`` shows of one
  record) that several tasks share: candidates with the model's scores and ranks, the gold's margin.

Each runs through ``run.map_units``, so an interrupted run resumes; the records it returns
are JSON-able and go to ``predictions.jsonl``. A dataset package then writes only its loading
and its official scoring.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from abduct.contract.protocols import Metric, MetricResult, TextPool
from abduct.contract.stages import Candidate, Choice, GenerationItem, TwoWay
from abduct.legacy import RunContext

__all__ = ["Candidate", "Choice", "GenerationItem", "TwoWay", "accuracy", "batched", "compare_two", "first_argmax",
           "generate", "gold_margin", "multiple_choice", "ranks", "score_generations", "scored_texts",
           "strictly_higher"]


class MetricSource(Protocol):
    """Where a task gets the run's metrics: a ``RunInfo`` (or a legacy ``RunContext``)."""

    def metric(self, name: str, **options: Any) -> Metric: ...


def batched(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


# -- multiple choice ------------------------------------------------------------------------


def first_argmax(scores: Sequence[float] | np.ndarray) -> int:
    """Index of the maximum; ties go to the first maximal index."""
    return int(np.argmax(np.asarray(scores, dtype=np.float64)))


def multiple_choice(run: RunContext, stage: str, items: Sequence[Choice], per_unit: int = 16) -> list[dict[str, Any]]:
    """Records ``{id, scores, choice, label, correct}``, one per item, in order."""
    engine = run.require_scorer()

    def answer(batch: Sequence[Choice]) -> list[dict[str, Any]]:
        visuals = [item.visual for item in batch for _ in item.candidates]
        texts = [text for item in batch for text in item.candidates]
        flat = iter(engine.score_pairs(visuals, texts).tolist())
        records = []
        for item in batch:
            scores = [next(flat) for _ in item.candidates]
            choice = first_argmax(scores)
            records.append({"id": item.id, "scores": scores, "choice": choice, "label": item.label,
                            "correct": None if item.label is None else choice == item.label})
        return records

    return run.map_units(stage, [(b[0].id, b) for b in batched(items, per_unit)], answer)


def accuracy(records: Sequence[Mapping[str, Any]]) -> float:
    """100 x the share of records marked ``correct`` (0.0 for none)."""
    return 100.0 * float(np.mean([bool(r["correct"]) for r in records])) if records else 0.0


# -- two-way comparison ---------------------------------------------------------------------


def strictly_higher(scores: Sequence[float], gold: int) -> bool:
    """The gold candidate wins only by a strictly higher score: a tie counts 0."""
    return bool(scores[gold] > scores[1 - gold])


def compare_two(run: RunContext, stage: str, items: Sequence[TwoWay], per_unit: int = 32) -> list[dict[str, Any]]:
    """Records ``{id, scores: [first, second], gold, correct}``, one per item, in order."""
    engine = run.require_scorer()

    def judge(batch: Sequence[TwoWay]) -> list[dict[str, Any]]:
        candidates = [c for item in batch for c in (item.first, item.second)]
        flat = engine.score_pairs([c.visual for c in candidates], [c.text for c in candidates]).tolist()
        return [{"id": item.id, "scores": pair, "gold": item.gold, "correct": strictly_higher(pair, item.gold)}
                for item, pair in zip(batch, batched(flat, 2))]

    return run.map_units(stage, [(b[0].id, b) for b in batched(items, per_unit)], judge)


# -- generate, then score -------------------------------------------------------------------


def generate(
    run: RunContext, stage: str, items: Sequence[GenerationItem], pool: TextPool | None = None, per_unit: int = 64
) -> list[dict[str, Any]]:
    """Records ``{id, prediction, references}``, one per item, in order."""
    engine = run.require_generator()

    def write(batch: Sequence[GenerationItem]) -> list[dict[str, Any]]:
        texts = engine.generate([item.request for item in batch], pool)
        return [{"id": item.id, "prediction": text, "references": list(item.references)}
                for item, text in zip(batch, texts)]

    return run.map_units(stage, [(b[0].id, b) for b in batched(items, per_unit)], write)


def score_generations(
    run: MetricSource, records: Sequence[Mapping[str, Any]], metrics: Mapping[str, Mapping[str, Any]],
    keep: dict[str, MetricResult] | None = None,
) -> dict[str, Any]:
    """Corpus values of each metric (``{name: options}``) over the records, keyed
    ``name`` when the metric reports one value and ``name.value`` when it reports several.
    ``keep`` receives each metric's whole result by name (per-sample values: intervals)."""
    predictions = {str(r["id"]): str(r["prediction"]) for r in records}
    references = {str(r["id"]): list(r["references"]) for r in records}
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


def gold_margin(scores: Sequence[float], gold: int) -> float | None:
    """The gold's score minus the best other one: above 0 when the model ranks the gold first."""
    others = [s for i, s in enumerate(scores) if i != gold]
    return float(scores[gold] - max(others)) if others and 0 <= gold < len(scores) else None
