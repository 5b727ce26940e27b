"""The ``clip`` scorer: a dual encoder, so the runner encodes each unique input once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from abduct import VisualInput
from abduct_clip._encode import encode_images, encode_texts, resolve_device
from abduct_clip._loading import LoadedModel, build
from abduct_clip.settings import ClipSettings


class ClipScorer:
    """Plausibility = cosine similarity of the image (region drawn on it) and the text."""

    accepts = frozenset({"image", "region"})

    def __init__(self, settings: ClipSettings, *, seed: int = 0, device: str = "cpu", batch_size: int = 64) -> None:
        self.device = torch.device(resolve_device(device))
        self.loaded: LoadedModel = build(settings, seed=seed, device=str(self.device))
        self.settings = self.loaded.settings
        self.batch_size = max(1, batch_size)
        self.fingerprint = (
            f"clip|arch={self.loaded.arch}|weights={self.loaded.weights}|size={self.loaded.preprocess.size}"
            f"|{self.settings.describe()}"
        )

    @property
    def model(self) -> torch.nn.Module:
        return self.loaded.model

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        """L2-normalised image embeddings; a widescreen image's two views are averaged first."""
        features = encode_images(
            self.model, self.loaded.preprocess, visuals,
            batch_size=self.batch_size, workers=self.settings.num_workers, device=self.device,
        )
        return features.numpy().astype(np.float32)

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised text embeddings of the texts after prompt and prefix."""
        formatted = [self.settings.format_text(t) for t in texts]
        features = encode_texts(
            self.model, self.loaded.tokenizer, formatted, batch_size=self.batch_size, device=self.device
        )
        return features.numpy().astype(np.float32)

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        """Cosine similarity of each ``(visuals[i], texts[i])`` pair."""
        if len(visuals) != len(texts):
            raise ValueError("score() needs as many visuals as texts")
        if not len(texts):
            return np.zeros(0)
        v = self.encode_visual(visuals).astype(np.float64)
        t = self.encode_text(texts).astype(np.float64)
        scores: np.ndarray = np.einsum("ij,ij->i", v, t)
        return scores
