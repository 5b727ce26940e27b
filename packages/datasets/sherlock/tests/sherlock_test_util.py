"""Helpers shared by the Sherlock tests: JSON writing, and a test plugin with third-party
models (a text-only clue reader, a matrix-only random scorer, a clue echo and a pixel reader)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from abduct import (
    AbductError,
    Decoding,
    GenerationRequest,
    Registration,
    Settings,
    Spec,
    TextPool,
    VisualInput,
    hookimpl,
)
from abduct.host import Registry, build_registry


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


def random_model(seed: int) -> Any:
    """The core's chance baseline ``random:SEED``, built through the registry as a run builds it."""
    return build_registry().create("model", f"random:{seed}")


class MatrixRandom:
    """Only ``score_matrix`` (no ``score``, no encoders): the random model's matrix."""

    accepts = build_registry().create("model", "random").accepts

    def __init__(self, seed: int) -> None:
        self.random = random_model(seed)

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return self.random.score_matrix(visuals, texts)


class CountedMatrix(MatrixRandom):
    """``MatrixRandom`` that counts its calls and, while ``budget`` is set, raises once it has
    answered that many (an interrupted run); class-wide, since the registry builds one per run."""

    calls = 0
    budget: int | None = None

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        if CountedMatrix.budget is not None and CountedMatrix.calls >= CountedMatrix.budget:
            raise AbductError("interrupted")
        CountedMatrix.calls += 1
        return super().score_matrix(visuals, texts)


def make_counted_matrix(spec: Spec, settings: Settings) -> CountedMatrix:
    return CountedMatrix(settings.seed)


class ClueEcho:
    """A text-only generator that writes the clue back (what a generation task gives it)."""

    accepts = needs = frozenset({"context"})

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        return [f"{r.prompt or ''} {r.visual.context}".strip() for r in requests]


class PixelReader:
    """Reads the pixels of the region (its first box): scores ``sin(brightness x (1 + len(text) % 13))``
    and writes the brightness; records every image it opens (class-wide, like ``ClueReader``)."""

    accepts = frozenset({"image", "region"})
    seen: list[str] = []

    def __init__(self) -> None:
        self.cache: dict[tuple[str | None, Any], float] = {}

    def brightness(self, visual: VisualInput) -> float:
        key = (visual.media, visual.region)
        if key not in self.cache:
            PixelReader.seen.append(str(visual.media))
            pixels = np.asarray(Image.open(str(visual.media)).convert("L"), dtype=float)
            if visual.region is not None:
                box = visual.region.boxes[0]
                pixels = pixels[int(box.top): int(box.top + box.height) + 1, int(box.left): int(box.left + box.width) + 1]
            self.cache[key] = float(pixels.mean())
        return self.cache[key]

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.array([np.sin(self.brightness(v) * (1 + len(t) % 13)) for v, t in zip(visuals, texts)])

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        return [f"brightness {self.brightness(r.visual):.1f}" for r in requests]


def make_pixel_reader(spec: Spec, settings: Settings) -> PixelReader:
    return PixelReader()


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
        yield Registration("counted-matrix", "Random scores as a matrix, counted, interruptible",
                           "sherlock_test_util:make_counted_matrix")
        yield Registration("pixel-reader", "Reads the region's pixels", "sherlock_test_util:make_pixel_reader")
        yield Registration("matrix-random", "Random scores, as a matrix only", "sherlock_test_util:make_matrix_random")


def registry_with_test_models() -> Registry:
    return build_registry(extra_plugins=[("sherlock-test-models", ExtraModels())])
