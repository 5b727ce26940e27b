"""The protocols plugins implement. Plugins need not inherit from them: they are structural.

A model is any object with some of the methods below: it scores (``score``,
``score_matrix``, or the dual-encoder pair ``encode_visual``/``encode_text``), generates
(``generate``), or both. The engines pick the fastest path a model offers and derive the
others (pairs from a matrix, a matrix from pairs).

A model states what inputs it takes with an ``accepts`` attribute, a subset of
``FEATURES`` (image, video, region, context, related; default: ``{"image"}``), and what it cannot do without with
``needs`` (default: nothing); ``abduct.host.model_traits`` reads both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Protocol, runtime_checkable

import numpy as np

from abduct.contract.options import Range, check_fields
from abduct.contract.records import GenerationRequest, GroundedText, VisualInput


@runtime_checkable
class Scorer(Protocol):
    """Plausibility of ``texts[i]`` given ``visuals[i]``; higher means more plausible."""

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class MatrixScorer(Protocol):
    """The full ``len(visuals) x len(texts)`` score matrix at once."""

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class DualEncoder(Protocol):
    """L2-normalised embeddings; score = visual @ text.T (N x M scores cost N + M encodings)."""

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray: ...

    def encode_text(self, texts: Sequence[str]) -> np.ndarray: ...


SCORING_PROTOCOLS = (Scorer, MatrixScorer, DualEncoder)


@dataclass(frozen=True, kw_only=True)
class Decoding:
    """How a generator decodes; greedy unless told otherwise. With sampling, text must depend
    only on (seed, request), never on batching: use ``seed_for``."""

    max_new_tokens: Annotated[int, Range(ge=1)] = 32
    num_beams: Annotated[int, Range(ge=1)] = 1
    do_sample: bool = False
    temperature: Annotated[float, Range(gt=0)] = 1.0
    top_p: Annotated[float, Range(gt=0, le=1)] = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        check_fields(self, "decoding option")

    def describe(self) -> str:
        return (f"max_new_tokens={self.max_new_tokens}|num_beams={self.num_beams}|do_sample={self.do_sample}"
                f"|temperature={self.temperature}|top_p={self.top_p}|seed={self.seed}")

    def seed_for(self, request_key: str) -> int:
        """A per-request seed (63 bits) from the run's seed and the request's identity."""
        digest = hashlib.blake2b(f"{self.seed}\x00{request_key}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "little") & ((1 << 63) - 1)


@dataclass(frozen=True)
class TextPool:
    """Texts a task offers to generators that choose rather than write (the random baseline,
    retrieval baselines): e.g. the training split's sentences."""

    texts: tuple[str, ...]
    digest: str = ""

    @classmethod
    def of(cls, texts: Sequence[str]) -> TextPool:
        unique = tuple(dict.fromkeys(texts))
        digest = hashlib.sha256("\x00".join(unique).encode()).hexdigest()
        return cls(unique, digest)


@runtime_checkable
class Generator(Protocol):
    """Text for each request (its visual input, context and prompt)."""

    def generate(
        self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None
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


@runtime_checkable
class PairDataset(Protocol):
    """A dataset that offers (visual input, text) pairs for training (e.g. CLIP fine-tuning)."""

    def pairs(self, data_dir: Path, split: str) -> Sequence[GroundedText]: ...
