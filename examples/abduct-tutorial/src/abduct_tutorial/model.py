"""The model: a picture is bright when its mean grey level is above ``threshold``."""

from collections.abc import Sequence

import numpy as np
from PIL import Image

from abduct import Settings, Spec, VisualInput


class BrightnessModel:
    accepts = frozenset({"image"})  # what it reads of an input

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.fingerprint = f"tutorial-brightness-v1,threshold={threshold}"  # changes when outputs may

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        grey = np.array([np.asarray(Image.open(str(v.media)).convert("L")).mean() / 255 for v in visuals])
        side = np.array([1.0 if "bright" in text else -1.0 for text in texts])
        return side * (grey - self.threshold)  # how well texts[i] fits visuals[i]


def make_model(spec: Spec, settings: Settings, *, threshold: float = 0.5) -> BrightnessModel:
    return BrightnessModel(threshold)
