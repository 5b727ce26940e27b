"""The "dumb pixel" baseline of NL-EYE: a hypothesis is scored by the brightness of its
image's upper-left pixel (mean of R, G, B over 255), brighter = more plausible
(``prefer=dark`` reverses it). It reads the hypothesis image, which the task gives as the
premise's related input, so it accepts ``related``; an input without one is scored by its
own image."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from PIL import Image

from abduct import AbductError, Settings, Spec, VisualInput
from abduct.kit import require_regular_image


def corner_brightness(path: str) -> float:
    with Image.open(require_regular_image(path)) as image:
        pixel = image.convert("RGB").getpixel((0, 0))
    assert isinstance(pixel, tuple)
    return float(sum(pixel[:3])) / (3 * 255.0)


class DumbPixel:
    accepts = frozenset({"image", "related"})
    needs = frozenset({"image"})

    def __init__(self, prefer: Literal["bright", "dark"] = "bright") -> None:
        self.sign = 1.0 if prefer == "bright" else -1.0
        self.fingerprint = f"dumb-pixel-{prefer}"

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        out = []
        for v in visuals:
            target = v.related[-1] if v.related else v
            if target.media is None:
                raise AbductError("dumb-pixel needs an image")
            out.append(self.sign * corner_brightness(target.media))
        return np.array(out, dtype=np.float64)


def make_dumb_pixel(spec: Spec, settings: Settings, *, prefer: Literal["bright", "dark"] = "bright") -> DumbPixel:
    """``dumb-pixel[,prefer=bright|dark]``."""
    return DumbPixel(prefer)
