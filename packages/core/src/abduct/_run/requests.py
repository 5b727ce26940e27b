"""How the runner answers a stage's shared request: each kind's model calls, batched into units
that go through the run's unit store (so an interrupted run resumes), one record per item, in order.
The store (and a shard's records.jsonl) keeps each record as a JSON dict; ``typed`` makes a
stage's stored records the typed results its request promises (``Chosen``, ``Compared``,
``Generated``, ``Judged``) for ``after=`` and ``finish``, in a live run and in a merge alike.

- ``Choose``: K candidate texts per input scored, the first maximal index chosen;
- ``Compare``: two (input, text) candidates scored; correct only when the gold one scores
  strictly higher (a tie counts 0);
- ``Generate``: one text per item through the generation engine;
- ``Judge``: the ``--judge`` model's verdict on each item.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from abduct._run.runner import Run, expecting
from abduct.contract.stages import (
    Choice,
    Choose,
    Chosen,
    Compare,
    Compared,
    Custom,
    Generate,
    Generated,
    GenerationItem,
    Judge,
    Judged,
    Records,
    Request,
    TwoWay,
)
from abduct.kit.reasoning import Reply, reasoning_fields
from abduct.kit.shapes import batched, first_argmax, strictly_higher

Stored = list[dict[str, Any]]  # a stage's records as the unit store keeps them


@dataclass(frozen=True)
class JudgedBy(Judged):
    """A ``Judged`` record that also carries, with several ``--judge`` specs, each further
    judge's record of the same item by its spec (``others``; with one judge, a plain ``Judged``). The contract's
    ``Judged`` is unchanged: a task reads it as ``getattr(record, "others", {})``, as
    ``abduct_modelkit.agreement.judge_agreement`` does."""

    others: dict[str, Judged] = field(default_factory=dict)


def typed(request: Request, records: Stored) -> Records:
    """``records`` (as stored) as ``request``'s results; a ``Custom`` step's stay its dicts."""
    if isinstance(request, Choose):
        return [Chosen(r["id"], list(r["scores"]), r["choice"], r["label"], r["correct"]) for r in records]
    if isinstance(request, Compare):
        return [Compared(r["id"], list(r["scores"]), r["gold"], r["correct"]) for r in records]
    if isinstance(request, Generate):
        return [Generated(r["id"], Reply(r["prediction"], r.get("reasoning"), r.get("reasoning_finished", True)),
                          list(r["references"])) for r in records]
    if isinstance(request, Judge):
        return [JudgedBy(r["id"], r["equivalent"], r["raw"], list(r["answers"]),
                         {spec: Judged(r["id"], o["equivalent"], o["raw"], list(o["answers"]))
                          for spec, o in r["others"].items()}) if "others" in r  # several --judge specs
                else Judged(r["id"], r["equivalent"], r["raw"], list(r["answers"])) for r in records]
    assert isinstance(request, Custom)
    return records


def answer(run: Run, stage: str, request: Choose | Compare | Generate | Judge) -> Stored:
    """A shared request's records as stored (JSON dicts), one per item, in order."""
    if isinstance(request, Choose):
        return multiple_choice(run, stage, request.items, request.per_unit)
    if isinstance(request, Compare):
        return compare_two(run, stage, request.items, request.per_unit)
    if isinstance(request, Generate):
        return generate(run, stage, request)
    return judged(run, stage, request)


def judged(run: Run, stage: str, request: Judge) -> Stored:
    """Records ``{id, equivalent, raw, answers}``; with further ``--judge`` specs, ``others``:
    each one's ``{equivalent, raw, answers}`` by its spec (its judgments stored as stage
    ``STAGE~judge2``, ``~judge3``..., so that a killed run resumes them too)."""
    read = request.answers == "verdict"
    verdicts = run.require_judge().judge(request.items, request.template, stage=stage, per_unit=request.per_unit,
                                         verdicts=read)
    others = {other.spec: other.judge(request.items, request.template, stage=f"{stage}~judge{k}",
                                      per_unit=request.per_unit, verdicts=read)
              for k, other in enumerate(run.bound_other_judges(), start=2)}
    if read:
        for other in run.other_judges:
            other.compare_with(verdicts, others[other.spec])
    records: Stored = []
    for index, (item, v) in enumerate(zip(request.items, verdicts)):
        record: dict[str, Any] = {"id": item.id, "equivalent": v.equivalent, "raw": v.raw, "answers": list(v.answers)}
        if others:
            record["others"] = {spec: {"equivalent": o[index].equivalent, "raw": o[index].raw,
                                       "answers": list(o[index].answers)} for spec, o in others.items()}
        records.append(record)
    return records


def multiple_choice(run: Run, stage: str, items: Sequence[Choice], per_unit: int) -> Stored:
    """Records ``{id, scores, choice, label, correct}``."""
    units = [(b[0].id, b) for b in batched(items, per_unit)]
    engine = run.require_scorer()

    def score(batch: Sequence[Choice]) -> list[dict[str, Any]]:
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

    return run.map_units(stage, units, score, expecting("id", "scores", "choice", "label", "correct"))


def compare_two(run: Run, stage: str, items: Sequence[TwoWay], per_unit: int) -> Stored:
    """Records ``{id, scores: [first, second], gold, correct}``."""
    units = [(b[0].id, b) for b in batched(items, per_unit)]
    engine = run.require_scorer()

    def score(batch: Sequence[TwoWay]) -> list[dict[str, Any]]:
        candidates = [c for item in batch for c in (item.first, item.second)]
        flat = engine.score_pairs([c.visual for c in candidates], [c.text for c in candidates]).tolist()
        return [{"id": item.id, "scores": pair, "gold": item.gold, "correct": strictly_higher(pair, item.gold)}
                for item, pair in zip(batch, batched(flat, 2))]

    return run.map_units(stage, units, score, expecting("id", "scores", "gold", "correct"))


def generate(run: Run, stage: str, request: Generate) -> Stored:
    """Records ``{id, prediction, references}``."""
    units = [(b[0].id, b) for b in batched(request.items, request.per_unit)]
    engine = run.require_generator()

    def write(batch: Sequence[GenerationItem]) -> list[dict[str, Any]]:
        texts = engine.generate([item.request for item in batch], request.pool)
        return [{"id": item.id, "prediction": str(text), "references": list(item.references), **reasoning_fields(text)}
                for item, text in zip(batch, texts)]

    return run.map_units(stage, units, write, expecting("id", "prediction", "references"))
