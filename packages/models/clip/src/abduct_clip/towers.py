"""CLIP's image tower for other packages (e.g. abduct-var's frame encoder): loaded exactly as
the ``clip:...`` model loads it, frozen, with the centre square view its preprocessing expects.

Imports torch and open_clip: import this module only where they are needed."""

from __future__ import annotations

from typing import Any

from abduct import AbductError, Spec
from abduct.host import bind_options
from abduct_clip._imaging import square_views
from abduct_clip._loading import build
from abduct_clip.factory import make_clip
from abduct_clip.settings import clip_settings

__all__ = ["frozen_tower", "square_views"]


def frozen_tower(spec: str, seed: int = 0, device: str = "cpu") -> Any:
    """The ``clip:...`` model ``spec`` names, plain (no region drawing), centre view, no gradients
    (abduct-clip's loaded model: ``.model`` the open_clip model, ``.preprocess`` its transforms)."""
    parsed = Spec.parse(spec)
    if parsed.name != "clip":
        raise AbductError(f"the frame encoder must be a clip model (clip:tiny, clip:ViT-B-16@openai), got '{spec}'")
    options: dict[str, Any] = bind_options("model", "clip", make_clip, parsed.option_dict())
    options.pop("workers", None)
    settings = clip_settings(parsed, **{**options, "mode": "plain", "images": "center"})
    loaded = build(settings, seed=seed, device=device)
    loaded.model.requires_grad_(False)
    return loaded
