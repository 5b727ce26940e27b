"""Helpers shared by the Sherlock tests: JSON writing, and a test plugin with two third-party
scorers (a text-only clue reader and a matrix-only random scorer)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from abduct import (
    Decoding,
    GenerationRequest,
    Registration,
    Registry,
    Settings,
    Spec,
    TextPool,
    VisualInput,
    build_registry,
    hookimpl,
)
from abduct.testing import RandomModel


def write_json(path: Path, obj: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


class ClueReader:
    """Text-only (the paper's T5 row, in miniature): scores an inference by its word overlap
    with the clue, and records every (input, text) pair it is given."""

    accepts = needs = frozenset({"context"})
    seen: list[tuple[VisualInput, str]] = []  # class-wide: the registry builds one per run

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        ClueReader.seen.extend(zip(visuals, texts))
        return np.array([len(set(str(v.context).split()) & set(t.split())) for v, t in zip(visuals, texts)], float)


class MatrixRandom:
    """Only ``score_matrix`` (no ``score``, no encoders): the random model's matrix."""

    accepts = RandomModel.accepts

    def __init__(self, seed: int) -> None:
        self.random = RandomModel(seed)

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return self.random.score_matrix(visuals, texts)


class ClueEcho:
    """A text-only generator that writes the clue back (what a generation task gives it)."""

    accepts = needs = frozenset({"context"})

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        return [f"{r.prompt or ''} {r.visual.context}".strip() for r in requests]


def make_clue_echo(spec: Spec, settings: Settings) -> ClueEcho:
    return ClueEcho()


def make_clue_reader(spec: Spec, settings: Settings) -> ClueReader:
    return ClueReader()


def make_matrix_random(spec: Spec, settings: Settings) -> MatrixRandom:
    return MatrixRandom(settings.seed)


class ExtraModels:
    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("clue-reader", "Reads only the clue", "sherlock_test_util:make_clue_reader")
        yield Registration("clue-echo", "Writes the clue back", "sherlock_test_util:make_clue_echo")
        yield Registration("matrix-random", "Random scores, as a matrix only", "sherlock_test_util:make_matrix_random")


def registry_with_test_models() -> Registry:
    return build_registry(extra_plugins=[("sherlock-test-models", ExtraModels())])
