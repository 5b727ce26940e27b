"""The square views a CLIP model sees of a drawn image (widescreen, centre, pad)."""

from __future__ import annotations

import numpy as np
from PIL import Image

from abduct import Box, Region
from abduct_modelkit import render

BASE = (10, 20, 30)


def _pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image, dtype=np.int64)


def test_drawn_at_full_resolution_before_resizing() -> None:
    from abduct_clip._imaging import Preprocess

    image = Image.new("RGB", (400, 200), BASE)
    region = Region((Box(100, 50, 100, 100),))
    views = square_views_of(image, region)
    assert [v.size for v in views] == [(200, 200), (200, 200)]
    # the outline in the left view is still 3 px at the original scale
    left = _pixels(views[0])
    assert left[100, 100:103].tolist() == [[5, 255, 55]] * 3 and left[100, 103].tolist() != [5, 255, 55]
    assert Preprocess(size=64).to_tensor(views[0]).shape == (3, 64, 64)


def square_views_of(image: Image.Image, region: Region) -> list[Image.Image]:
    from abduct_clip._imaging import square_views

    return square_views(render(image, region, "highlight"), "widescreen")


def test_widescreen_center_and_pad_views() -> None:
    from abduct_clip._imaging import CLIP_MEAN, square_views

    wide = Image.new("RGB", (300, 100), BASE)
    wide.paste((200, 0, 0), (0, 0, 10, 100))  # a red stripe at the left edge
    wide.paste((0, 200, 0), (290, 0, 300, 100))  # a green one at the right edge
    left, right = square_views(wide, "widescreen")
    assert left.size == right.size == (100, 100)
    assert left.getpixel((0, 50)) == (200, 0, 0) and right.getpixel((99, 50)) == (0, 200, 0)
    top, bottom = square_views(wide.rotate(90, expand=True), "widescreen")
    assert top.size == bottom.size == (100, 100)
    assert len(square_views(Image.new("RGB", (50, 50)), "widescreen")) == 1
    (center,) = square_views(wide, "center")
    assert center.size == (100, 100) and center.getpixel((50, 50)) == BASE
    (padded,) = square_views(wide, "pad")
    assert padded.size == (300, 300)
    assert padded.getpixel((5, 5)) == tuple(round(255 * m) for m in CLIP_MEAN)
