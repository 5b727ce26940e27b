"""Built-in baselines: a seeded random model (it scores and generates) and a constant scorer."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np

from abduct.contract.errors import AbductError
from abduct.contract.protocols import Decoding, TextPool
from abduct.contract.records import FEATURES, GenerationRequest, VisualInput
from abduct.contract.spec import Settings, Spec

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _hash64(text: str, seed: int) -> np.uint64:
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8, key=str(seed).encode()).digest()
    return np.uint64(int.from_bytes(digest, "little"))


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: decorrelates combined hashes."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        mixed: np.ndarray = x ^ (x >> np.uint64(31))
        return mixed


class RandomModel:
    """The chance baseline. Scores: uniform in [0, 1), depending only on (seed, visual, text).
    Generation: a pick from the task's pool of texts, depending only on (seed, request).

    Hashing instead of drawing from a stream keeps a score or a pick the same whatever the
    batching, order or resumption of a run; keys keep only the media paths' last two parts
    (e.g. ``VG_100K/2370338.jpg``), so the same data gives the same numbers wherever its
    directory lies. Context text is not read (a chance baseline reads nothing), so tasks that
    give it treat it as optional.
    """

    accepts = frozenset(FEATURES) - {"context"}

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.fingerprint = f"random-seed{seed}"

    def _visual_hashes(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        return np.array([_hash64("v" + v.key(portable=True), self.seed) for v in visuals], dtype=np.uint64)

    def _text_hashes(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([_hash64("t" + t, self.seed) for t in texts], dtype=np.uint64)

    @staticmethod
    def _to_unit(h: np.ndarray) -> np.ndarray:
        return (_mix(h) >> np.uint64(11)).astype(np.float64) / float(1 << 53)

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        if len(visuals) != len(texts):
            raise ValueError("score() needs as many visuals as texts")
        return self._to_unit(_mix(self._visual_hashes(visuals)) ^ self._text_hashes(texts))

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        v = _mix(self._visual_hashes(visuals))[:, None]
        t = self._text_hashes(texts)[None, :]
        return self._to_unit(v ^ t)

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        if pool is None or not pool.texts:
            raise AbductError("random generation picks from a pool of texts, and this task offers none")
        keys = [f"{r.visual.key(portable=True)}\x00{r.prompt or ''}" for r in requests]
        picks = _mix(np.array([_hash64("g" + k, self.seed) for k in keys], dtype=np.uint64)) % np.uint64(len(pool.texts))
        return [pool.texts[int(i)] for i in picks]


class ConstantScorer:
    """Every pair gets the same score: the all-ties case of every metric."""

    accepts = frozenset(FEATURES)

    def __init__(self, value: float = 0.0) -> None:
        self.value = float(value)
        self.fingerprint = f"constant-{self.value!r}"

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.full(len(texts), self.value)

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.full((len(visuals), len(texts)), self.value)


def make_random(spec: Spec, settings: Settings) -> RandomModel:
    """``random`` or ``random:SEED``; without an argument the run's ``--seed`` is used."""
    if spec.argument is None:
        return RandomModel(settings.seed)
    try:
        return RandomModel(int(spec.argument))
    except ValueError:
        raise AbductError(f"random: seed must be an integer, got '{spec.argument}'") from None


def make_constant(spec: Spec, settings: Settings) -> ConstantScorer:
    """``constant`` or ``constant:VALUE``."""
    if spec.argument is None:
        return ConstantScorer()
    try:
        value = float(spec.argument)
    except ValueError:
        raise AbductError(f"constant: value must be a number, got '{spec.argument}'") from None
    if not math.isfinite(value):  # a NaN or inf score breaks every metric's ranking
        raise AbductError(f"constant: value must be a finite number, got '{spec.argument}'")
    return ConstantScorer(value)
