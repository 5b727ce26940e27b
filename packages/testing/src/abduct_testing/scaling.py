"""Scores at the ends of the float range, for checking that a task's numbers depend only on
the order of its scores: a positive scale keeps argmax and strict order as long as no product
overflows to inf or two distinct products round to one float.

The base scores are small integers (-3..3: many ties, both signs), so every scale here is
exact: powers of two only move the exponent (``2**-1074`` turns the integer k into the
subnormal ``k * 5e-324``), and the products of -3..3 with ``1e300`` or ``1e-300`` are distinct
normal floats in the same order.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from abduct.contract import VisualInput

EXTREME_SCALES: tuple[float, ...] = (2.0**1000, 1e300, 2.0**-1000, 1e-300, 2.0**-1074)


def base_score(visual: VisualInput, text: str) -> int:
    """An integer in -3..3 from what the pair holds (file names, not paths, so it is the same
    in every temporary folder)."""
    names = [Path(v.media).name if v.media else "" for v in (visual, *visual.related)]
    return zlib.crc32("|".join([*names, visual.context or "", text]).encode()) % 7 - 3


class ScaledScorer:
    """Scores every pair ``base_score * scale``; reads whatever a task offers."""

    accepts = frozenset({"image", "region", "context", "related"})

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.array([base_score(v, t) * self.scale for v, t in zip(visuals, texts)], dtype=np.float64)


def scaled_models() -> Mapping[str, tuple[str, Callable[[], object]]]:
    """``scaled-0`` (scale 1) and ``scaled-1`` ... (each of ``EXTREME_SCALES``), for
    ``registry_with_models``."""
    scales = (1.0, *EXTREME_SCALES)
    return {f"scaled-{i}": (f"base scores x {s!r}", partial(ScaledScorer, s)) for i, s in enumerate(scales)}
