"""Running an abduct task on answers that came from elsewhere.

``record`` runs a task with a stand-in model that notes every request it is asked (and answers
nothing useful): the documents an export writes. ``replay`` runs it again with a stand-in that
answers each request from lmms-eval's outputs: the task's own ``evaluate`` then computes its
official metrics, exactly as ``abduct eval`` does with a live model. The requests come from the
task in the same order both times (same data, split, options and limit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from abduct import (
    AbductError,
    Decoding,
    Evaluation,
    GenerationEngine,
    GenerationRequest,
    ScoringEngine,
    Settings,
    TextPool,
    VisualInput,
    get_registry,
    load_task,
)
from abduct.testing import InputPolicy, Run  # a run of the task's own, with stand-in engines
from abduct_lmms.docs import generation_doc, scoring_doc

ACCEPTS = frozenset({"image", "region", "context", "related"})  # what lmms: takes (no video)
NAME = "lmms-eval"


class _Generating:
    """Notes each request's document; answers from ``answers`` (key -> text), "" when absent."""

    accepts = ACCEPTS

    def __init__(self, answers: Mapping[str, str] | None = None) -> None:
        self.answers = answers
        self.docs: list[dict[str, Any]] = []

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        docs = [generation_doc(r) for r in requests]
        self.docs += docs
        return [self._answer(d["key"]) for d in docs]

    def _answer(self, key: str) -> str:
        if self.answers is None:
            return ""
        if key not in self.answers:
            raise AbductError("lmms-eval's results lack a request this task asks; export the task again with the "
                              "same data, split and limit as the lmms-eval run")
        return self.answers[key]


class _Scoring:
    """Notes each (input, candidate) document; scores from ``answers`` (key -> log-likelihood)."""

    accepts = ACCEPTS

    def __init__(self, answers: Mapping[str, float] | None = None) -> None:
        self.answers = answers
        self.docs: list[dict[str, Any]] = []

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        docs = [scoring_doc(v, t) for v, t in zip(visuals, texts)]
        self.docs += docs
        if self.answers is None:
            return np.zeros(len(docs))
        missing = [d for d in docs if d["key"] not in self.answers]
        if missing:
            raise AbductError("lmms-eval's results lack a request this task asks; export the task again with the "
                              "same data, split and limit as the lmms-eval run")
        return np.array([self.answers[d["key"]] for d in docs], dtype=np.float64)


@dataclass(frozen=True)
class Source:
    """Which task on which data: what an export writes down and a replay reads back."""

    task: str
    data_dir: Path
    split: str | None = None
    limit: int | None = None
    seed: int = 0


def _evaluate(source: Source, model: _Generating | _Scoring) -> Evaluation:
    settings = Settings(seed=source.seed)
    task = load_task(source.task, settings=settings)
    split = str(source.split or getattr(task, "default_split", "test"))
    policy = InputPolicy(model, NAME, getattr(task, "optional_inputs", ()))
    generation = scoring = None
    if isinstance(model, _Generating):  # batch size only groups calls here: the stand-ins cost nothing
        generation = GenerationEngine(model, decoding=Decoding(seed=source.seed), batch_size=1024, quiet=True,
                                      policy=policy)
    else:
        scoring = ScoringEngine(model, batch_size=1024, quiet=True, policy=policy)
    run = Run(data_dir=source.data_dir, split=split, scoring=scoring, generation=generation, model_name=NAME,
              settings=settings, registry=get_registry(), limit=source.limit, quiet=True)
    return task.evaluate(run)


def record(source: Source) -> tuple[str, list[dict[str, Any]]]:
    """The request kind the task asks a model (``generate_until``, or ``loglikelihood`` for a
    task that only scores) and its documents, in order, each request once."""
    generating = _Generating()
    try:
        _evaluate(source, generating)
        kind, docs = "generate_until", generating.docs
    except AbductError as exc:
        if "does not score" not in str(exc):  # a task that scores: ask log-likelihoods instead
            raise
        scoring = _Scoring()
        _evaluate(source, scoring)
        kind, docs = "loglikelihood", scoring.docs
    unique = {d["key"]: d for d in docs}
    return kind, list(unique.values())


def replay(source: Source, kind: str, answers: Mapping[str, Any]) -> Evaluation:
    """The task's evaluation with each request answered from ``answers`` (key -> text or log-likelihood)."""
    model: _Generating | _Scoring = _Generating(answers) if kind == "generate_until" else _Scoring(answers)
    return _evaluate(source, model)
