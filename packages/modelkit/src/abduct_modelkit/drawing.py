"""How a model sees a region: the paper's overlay and the ablations' input modes.

Everything here works on the full-resolution original image, before any crop or resize,
so a 3 px outline is 3 px of the original whatever the model's resolution. Reading and
checking image files (``load_rgb``, ``image_problem``) is ``abduct.kit``'s: datasets do it too.
"""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageStat

from abduct import Box, Region

HIGHLIGHT_FILL = (255, 5, 205, 60)  # #ff05cd3c: translucent magenta
HIGHLIGHT_OUTLINE = (5, 255, 55, 255)  # #05ff37ff: opaque green
OUTLINE_WIDTH = 3


def _corners(box: Box) -> list[tuple[float, float]]:
    # PIL rectangles include both end points, as in the paper's drawing code.
    return [(box.left, box.top), (box.left + box.width, box.top + box.height)]


def mean_colour(image: Image.Image) -> tuple[int, int, int]:
    r, g, b = (round(v) for v in ImageStat.Stat(image).mean[:3])
    return (r, g, b)


def highlight(image: Image.Image, region: Region) -> Image.Image:
    """The paper's overlay: every box filled magenta (alpha 60) with a 3 px green outline.

    All boxes share one overlay, so where boxes overlap the later one overwrites the earlier
    (alpha does not accumulate); the overlay is then alpha-composited onto the image.
    """
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for box in region.boxes:
        draw.rectangle(_corners(box), fill=HIGHLIGHT_FILL, outline=HIGHLIGHT_OUTLINE, width=OUTLINE_WIDTH)
    return Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB")


def position_only(image: Image.Image, region: Region | None) -> Image.Image:
    """A mean-colour canvas with the boxes drawn opaque: where, but not what."""
    canvas = Image.new("RGB", image.size, mean_colour(image))
    if region is not None:
        draw = ImageDraw.Draw(canvas)
        for box in region.boxes:
            draw.rectangle(_corners(box), fill=HIGHLIGHT_FILL[:3], outline=HIGHLIGHT_OUTLINE[:3], width=OUTLINE_WIDTH)
    return canvas


def region_only(image: Image.Image, region: Region | None) -> Image.Image:
    """The crop of the boxes' union bounding box ("no context"), at least one pixel."""
    if region is None:
        return image
    left = max(0, int(min(b.left for b in region.boxes)))
    top = max(0, int(min(b.top for b in region.boxes)))
    right = min(image.width, int(round(max(b.right for b in region.boxes))) + 1)
    bottom = min(image.height, int(round(max(b.bottom for b in region.boxes))) + 1)
    left, top = min(left, image.width - 1), min(top, image.height - 1)
    return image.crop((left, top, max(right, left + 1), max(bottom, top + 1)))


def context_only(image: Image.Image, region: Region | None) -> Image.Image:
    """The image with every box painted over in its mean colour ("only context")."""
    if region is None:
        return image
    hidden = image.copy()
    draw = ImageDraw.Draw(hidden)
    fill = mean_colour(image)
    for box in region.boxes:
        draw.rectangle(_corners(box), fill=fill)
    return hidden


def render(image: Image.Image, region: Region | None, mode: str) -> Image.Image:
    """The full-resolution image a model of input ``mode`` sees."""
    if mode == "highlight":
        return image if region is None else highlight(image, region)
    if mode == "plain":
        return image
    if mode == "position":
        return position_only(image, region)
    if mode == "region":
        return region_only(image, region)
    if mode == "context":
        return context_only(image, region)
    raise ValueError(f"unknown input mode {mode!r}")
