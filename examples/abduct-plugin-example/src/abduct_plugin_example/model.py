"""The model ``example-color``: it scores AND generates.

- scoring, as a dual encoder: an image is embedded by its mean colour, a text by the colour
  it names (the engine turns these into pair scores and score matrices);
- generation: the name of the colour closest to the image's mean colour.

It reads only the image (``accepts``), so a task that gave it a region or a context text
would be refused before any call, unless the task lists them as optional inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from abduct import AbductError, Decoding, GenerationRequest, Settings, Spec, TextPool, VisualInput
from abduct_plugin_example.data import COLORS

UNKNOWN_RGB = (200, 200, 200)  # a text naming no colour: grey


def _unit(rows: np.ndarray) -> np.ndarray:
    centred = rows - 127.5
    unit: np.ndarray = centred / np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-9)
    return unit


class MeanColorModel:
    accepts = frozenset({"image"})  # what it reads: the image only (the core's default, stated)

    def __init__(self, crop: float = 1.0) -> None:
        if not 0.0 < crop <= 1.0:
            raise AbductError(f"example-color: crop must be in (0, 1], got {crop}")
        self.crop = crop
        # Caches are keyed by the fingerprint: it must change whenever an option changes the output.
        self.fingerprint = f"example-color-v2,crop={crop}"
        self._names = list(COLORS)
        self._palette = _unit(np.array([COLORS[n] for n in self._names], dtype=np.float64))

    def _mean_rgb(self, visual: VisualInput) -> np.ndarray:
        if visual.media is None:
            raise AbductError("example-color needs an image")
        pixels = np.asarray(Image.open(visual.media).convert("RGB"), dtype=np.float64)
        h, w = pixels.shape[:2]
        dh, dw = int(h * (1 - self.crop) / 2), int(w * (1 - self.crop) / 2)
        centre: np.ndarray = pixels[dh : h - dh, dw : w - dw].mean(axis=(0, 1))
        return centre

    # -- scoring (dual encoder) -----------------------------------------------------------
    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        return _unit(np.array([self._mean_rgb(v) for v in visuals]))

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        rgb = [next((COLORS[c] for c in COLORS if c in t.lower()), UNKNOWN_RGB) for t in texts]
        return _unit(np.array(rgb, dtype=np.float64))

    # -- generation -----------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        """The colour name nearest the image's mean colour. Deterministic, so the decoding
        settings change nothing; it writes its answer rather than picking from ``pool``."""
        similarity = self.encode_visual([r.visual for r in requests]) @ self._palette.T
        return [self._names[int(i)] for i in np.argmax(similarity, axis=1)]


def make_model(spec: Spec, settings: Settings, *, crop: float = 1.0) -> MeanColorModel:
    """``example-color[,crop=0.5]``: keyword-only parameters are the options the user can set
    (typed from the annotation: ``crop=0.5`` arrives as a float; unknown keys are refused).
    ``settings`` holds the run's device, batch size and seed; this model needs none of them."""
    return MeanColorModel(crop=crop)
