"""The protocols plugins implement. Plugins need not inherit from them: they are structural.

A model is any object with the methods below. The runner picks the fastest path a model
offers: ``encode_visual``/``encode_text`` (dual encoder: N visuals x M texts cost N + M
encodings and one matrix product), then ``score_matrix``, then pairwise ``score``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from abduct.records import VisualInput

if TYPE_CHECKING:
    from abduct.runner import Run


@runtime_checkable
class Scorer(Protocol):
    """Plausibility of ``texts[i]`` given ``visuals[i]``; higher means more plausible."""

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class MatrixScorer(Protocol):
    """Optional fast path: the full ``len(visuals) x len(texts)`` score matrix at once."""

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class DualEncoder(Protocol):
    """Optional fast path: L2-normalised embeddings; score = visual @ text.T."""

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray: ...

    def encode_text(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class Generator(Protocol):
    """Text for each visual input, optionally conditioned on a prompt or context text."""

    def generate(
        self, visuals: Sequence[VisualInput], prompts: Sequence[str | None]
    ) -> list[str]: ...


@dataclass(frozen=True)
class MetricResult:
    """Corpus-level values, per-sample values keyed by sample id, and descriptive info."""

    corpus: Mapping[str, float]
    per_sample: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Metric(Protocol):
    """Scores predictions against one or more references per id."""

    def compute(
        self,
        predictions: Mapping[str, str],
        references: Mapping[str, Sequence[str]],
        questions: Mapping[str, str] | None = None,
    ) -> MetricResult: ...


@runtime_checkable
class Dataset(Protocol):
    """Reads a benchmark's released files from a local directory; never downloads."""

    def load(self, data_dir: Path, split: str) -> Sequence[Any]:
        """Validated examples of ``split``; raises DataError naming file, record and field."""
        ...

    def check(self, data_dir: Path) -> list[str]:
        """Problems found (schema, missing or unreadable media) without running a model."""
        ...


@dataclass
class Evaluation:
    """What a task's evaluation produced.

    ``predictions`` are JSON-able per-sample records; ``data_files`` are hashed into
    results.json; ``details`` holds anything else worth keeping (e.g. per-chunk values).
    """

    metrics: dict[str, Any]
    predictions: list[dict[str, Any]]
    data_files: list[Path] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Task(Protocol):
    """A dataset split plus an evaluation protocol."""

    default_split: str

    def evaluate(self, model: object, run: Run) -> Evaluation:
        """Run ``model`` over ``run.data_dir`` through the runner and compute metrics."""
        ...

    def score_files(
        self, predictions: Path, answer_key: Path, instance_ids: Path | None = None
    ) -> dict[str, float]:
        """Score a predictions file in the benchmark's official format."""
        ...
