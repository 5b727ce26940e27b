"""The images a vision-language model is shown for one input: the media and then each
related input's, in order, every region drawn with the Sherlock highlight (``abduct_modelkit.drawing``)."""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image

from abduct import AbductError, VisualInput
from abduct.kit import load_rgb
from abduct_modelkit import render
from abduct_vlm.prompts import visual_parts

Frames = Callable[[VisualInput], list[Image.Image]]


def input_images(visual: VisualInput, *, model: str, max_images: int | None = None,
                 frames: Frames | None = None) -> list[Image.Image]:
    """The images of ``visual`` (a video part gives the frames ``frames`` samples); one-line
    errors for an unreadable image, a video without ``frames``, or more than ``max_images``."""
    found: list[Image.Image] = []
    for part in visual_parts(visual):
        if part.media is None:
            continue
        if part.kind == "video":
            if frames is None:
                raise AbductError(f"model '{model}' cannot take video inputs")
            found += frames(part)
        else:
            found.append(render(load_rgb(part.media), part.region, "highlight"))
    if max_images is not None and len(found) > max_images:
        raise AbductError(f"model '{model}' takes at most {max_images} image(s) per prompt, and an input has "
                          f"{len(found)} ({visual.media}); use a multi-image model or raise max_images")
    return found
