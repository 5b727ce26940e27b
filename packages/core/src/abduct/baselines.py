"""Built-in baselines: a seeded random scorer and a constant scorer."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import PurePath

import numpy as np

from abduct.errors import AbductError
from abduct.records import VisualInput
from abduct.spec import ModelOptions, ModelSpec

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


class RandomScorer:
    """Uniform scores in [0, 1) that depend only on (seed, visual, text).

    Hashing instead of drawing from a stream keeps a score the same whatever the batching,
    order or resumption of a run.
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.fingerprint = f"random-seed{seed}"

    @staticmethod
    def _portable_key(visual: VisualInput) -> str:
        # The image's last two path parts (e.g. ``VG_100K/2370338.jpg``) instead of its full
        # path, so the same data gives the same scores wherever its directory lies.
        key = visual.key()
        tail = "/".join(PurePath(visual.image).parts[-2:])
        return tail + key[len(visual.image) :]

    def _visual_hashes(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        return np.array([_hash64("v" + self._portable_key(v), self.seed) for v in visuals], dtype=np.uint64)

    def _text_hashes(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([_hash64("t" + t, self.seed) for t in texts], dtype=np.uint64)

    @staticmethod
    def _to_unit(h: np.ndarray) -> np.ndarray:
        return (_mix(h) >> np.uint64(11)).astype(np.float64) / float(1 << 53)

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        if len(visuals) != len(texts):
            raise ValueError("score() needs as many visuals as texts")
        with np.errstate(over="ignore"):
            combined = _mix(self._visual_hashes(visuals)) ^ self._text_hashes(texts)
        return self._to_unit(combined)

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        v = _mix(self._visual_hashes(visuals))[:, None]
        t = self._text_hashes(texts)[None, :]
        return self._to_unit(v ^ t)


class ConstantScorer:
    """Every pair gets the same score: the all-ties case of every metric."""

    def __init__(self, value: float = 0.0) -> None:
        self.value = float(value)
        self.fingerprint = f"constant-{self.value!r}"

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.full(len(texts), self.value)

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.full((len(visuals), len(texts)), self.value)


def make_random(spec: ModelSpec, options: ModelOptions) -> RandomScorer:
    """``random`` or ``random:SEED``; without an argument the run's ``--seed`` is used."""
    if spec.argument is None:
        return RandomScorer(options.seed)
    try:
        return RandomScorer(int(spec.argument))
    except ValueError:
        raise AbductError(f"random: seed must be an integer, got '{spec.argument}'") from None


def make_constant(spec: ModelSpec, options: ModelOptions) -> ConstantScorer:
    """``constant`` or ``constant:VALUE``."""
    if spec.argument is None:
        return ConstantScorer()
    try:
        return ConstantScorer(float(spec.argument))
    except ValueError:
        raise AbductError(f"constant: value must be a number, got '{spec.argument}'") from None
