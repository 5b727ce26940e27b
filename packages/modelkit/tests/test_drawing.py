"""The overlay of the paper, pixel by pixel, and the ablations' input modes."""

from __future__ import annotations

import numpy as np
from PIL import Image

from abduct import Box, Region
from abduct_modelkit import context_only, highlight, position_only, region_only, render

BASE = (10, 20, 30)


def _composite(fill: tuple[int, int, int, int], under: tuple[int, int, int]) -> np.ndarray:
    alpha = fill[3] / 255
    return np.array([f * alpha + u * (1 - alpha) for f, u in zip(fill[:3], under)])


def _pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image, dtype=np.int64)


def test_highlight_fill_outline_and_inclusive_end_points() -> None:
    image = Image.new("RGB", (60, 40), BASE)
    px = _pixels(highlight(image, Region((Box(10, 5, 20, 15),))))
    green = [5, 255, 55]
    # the outline is 3 px wide and opaque, and covers both end points (x=10 and x=30)
    for x in (10, 11, 12, 28, 29, 30):
        assert px[12, x].tolist() == green, x
    for y in (5, 6, 7, 18, 19, 20):
        assert px[y, 20].tolist() == green, y
    # inside: magenta at alpha 60/255 over the image
    np.testing.assert_allclose(px[12, 20], _composite((255, 5, 205, 60), BASE), atol=1)
    # outside the box nothing changes
    assert px[12, 9].tolist() == list(BASE) and px[12, 31].tolist() == list(BASE)
    assert px[4, 20].tolist() == list(BASE) and px[21, 20].tolist() == list(BASE)


def test_overlapping_boxes_do_not_accumulate_alpha() -> None:
    image = Image.new("RGB", (60, 40), BASE)
    single = _pixels(highlight(image, Region((Box(5, 5, 40, 30),))))
    double = _pixels(highlight(image, Region((Box(5, 5, 40, 30), Box(5, 5, 40, 30)))))
    assert (single == double).all()
    # a later box overwrites the earlier one's outline with its fill
    later = _pixels(highlight(image, Region((Box(5, 5, 40, 30), Box(2, 2, 50, 35)))))
    np.testing.assert_allclose(later[5, 20], _composite((255, 5, 205, 60), BASE), atol=1)


def test_input_modes() -> None:
    rng = np.random.default_rng(0)
    image = Image.fromarray(rng.integers(0, 256, (40, 60, 3), dtype=np.uint8))
    region = Region((Box(10, 5, 20, 15),))
    mean = tuple(round(v) for v in np.asarray(image).reshape(-1, 3).mean(0))
    plain = render(image, region, "plain")
    assert _pixels(plain).tolist() == _pixels(image).tolist()
    position = _pixels(position_only(image, region))
    assert position[0, 0].tolist() == list(mean) and position[12, 20].tolist() == [255, 5, 205]
    assert region_only(image, region).size == (21, 16)  # both end points included
    hidden = _pixels(context_only(image, region))
    assert hidden[12, 20].tolist() == list(mean)
    assert hidden[0, 0].tolist() == _pixels(image)[0, 0].tolist()
    assert render(image, None, "highlight") is image  # no region: nothing to draw
