"""A dual encoder that embeds an image by its mean colour and a text by the colour it names."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from abduct import ModelOptions, ModelSpec, VisualInput
from abduct_plugin_example.data import COLORS


def _unit(rows: np.ndarray) -> np.ndarray:
    centred = rows - 127.5
    return centred / np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-9)


class MeanColorScorer:
    fingerprint = "example-color-v1"

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        means = [np.asarray(Image.open(v.image).convert("RGB"), dtype=np.float64).mean(axis=(0, 1)) for v in visuals]
        return _unit(np.array(means))

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        rgb = [next((COLORS[c] for c in COLORS if c in t.lower()), (200, 200, 200)) for t in texts]  # unknown: grey
        return _unit(np.array(rgb, dtype=np.float64))


def make_scorer(spec: ModelSpec, options: ModelOptions) -> MeanColorScorer:
    return MeanColorScorer()
