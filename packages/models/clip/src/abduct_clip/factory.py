"""The ``clip`` model's factory. Its keyword-only parameters are the options a ``clip`` spec
takes (the core types and checks them from this signature, so every annotation resolves without
torch); their defaults are ``ClipSettings``'s, declared there once. torch is imported only when
a model is built."""

from __future__ import annotations

from abduct import Scorer, Settings, Spec
from abduct_clip.settings import ClipSettings, ImageProcessing, InputMode, TextPrefix, clip_settings


def make_clip(
    spec: Spec,
    settings: Settings,
    *,
    mode: InputMode = ClipSettings.mode,
    images: ImageProcessing = ClipSettings.images,
    prefix: TextPrefix = ClipSettings.prefix,
    prompt: str | None = ClipSettings.prompt,
    workers: int = ClipSettings.workers,
) -> Scorer:
    """Factory of the ``clip`` model (a ``ClipScorer``, a dual encoder too):
    ``clip:MODEL[@TAG][,mode=...,images=...,prefix=...,prompt=...,workers=N]``."""
    from abduct_clip._scorer import ClipScorer

    options = {"mode": mode, "images": images, "prefix": prefix, "prompt": prompt, "workers": workers}
    return ClipScorer(clip_settings(spec, **options), seed=settings.seed, device=settings.device,
                      batch_size=settings.batch_size)
