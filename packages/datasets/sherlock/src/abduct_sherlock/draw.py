"""Rendering the synthetic world's images: a patterned scene with shapes inside boxes."""

from __future__ import annotations

from PIL import Image, ImageDraw

from abduct import Box
from abduct_sherlock.world import RGB, Scene


def background(scene: Scene, width: int, height: int) -> Image.Image:
    a, b = scene.colors
    img = Image.new("RGB", (width, height), a)
    d = ImageDraw.Draw(img)
    step = max(8, min(width, height) // 8)
    if scene.pattern == "horizon":
        d.rectangle([0, height * 5 // 9, width, height], fill=b)
    elif scene.pattern == "dots":
        for y in range(step // 2, height, step):
            for x in range((y // step % 2) * step // 2, width, step):
                d.ellipse([x - 2, y - 2, x + 2, y + 2], fill=b)
    elif scene.pattern == "vstripes":
        for x in range(0, width, step * 2):
            d.rectangle([x, 0, x + step // 3, height], fill=b)
    elif scene.pattern == "lamps":
        d.rectangle([0, height * 3 // 4, width, height], fill=(70, 70, 80))
        for x in range(step, width, step * 3):
            d.ellipse([x - 5, height // 6 - 5, x + 5, height // 6 + 5], fill=b)
    elif scene.pattern == "checker":
        for y in range(0, height, step):
            for x in range(0, width, step):
                if (x // step + y // step) % 2:
                    d.rectangle([x, y, x + step - 1, y + step - 1], fill=b)
    elif scene.pattern == "grid":
        for x in range(0, width, step):
            d.line([x, 0, x, height], fill=b, width=2)
        for y in range(0, height, step):
            d.line([0, y, width, y], fill=b, width=2)
    elif scene.pattern == "waves":
        for y in range(step // 2, height, step):
            for x in range(0, width, step):
                d.arc([x, y - step // 4, x + step, y + step // 4], 0, 180, fill=b, width=2)
    elif scene.pattern == "hstripes":
        for y in range(0, height, step * 2):
            d.rectangle([0, y, width, y + step // 2], fill=b)
    return img


def draw_object(img: Image.Image, shape: str, box: Box, color: RGB) -> None:
    """Draw ``shape`` filling ``box`` (a 1x1 box gets a single pixel)."""
    d = ImageDraw.Draw(img)
    x0, t, w, h = box.left, box.top, box.width, box.height
    r, b = x0 + w - 1, t + h - 1
    if w < 4 or h < 4:
        d.rectangle([x0, t, r, b], fill=color)
        return
    outline = (0, 0, 0) if color != (10, 10, 10) else (128, 128, 128)
    cx = x0 + w / 2
    if shape == "umbrella":
        d.polygon([(x0, t + h * 0.45), (cx, t), (r, t + h * 0.45)], fill=color, outline=outline)
        d.line([cx, t + h * 0.45, cx, b], fill=outline, width=max(1, int(w // 12)))
    elif shape == "circle":
        s = min(w, h)
        d.ellipse([cx - s / 2, t + (h - s) / 2, cx + s / 2, t + (h + s) / 2 - 1], fill=color, outline=outline)
    elif shape == "bottle":
        d.rectangle([x0 + w * 0.25, t + h * 0.3, r - w * 0.25, b], fill=color, outline=outline)
        d.rectangle([x0 + w * 0.4, t, r - w * 0.4, t + h * 0.3], fill=color, outline=outline)
    elif shape == "dog":
        d.ellipse([x0, t + h * 0.35, r - w * 0.25, b - h * 0.15], fill=color, outline=outline)
        d.ellipse([r - w * 0.4, t, r, t + h * 0.45], fill=color, outline=outline)
        for x in (x0 + w * 0.15, x0 + w * 0.5):
            d.rectangle([x, b - h * 0.2, x + w * 0.08, b], fill=outline)
    elif shape == "car":
        d.rectangle([x0, t + h * 0.35, r, b - h * 0.2], fill=color, outline=outline)
        d.rectangle([x0 + w * 0.2, t + h * 0.1, r - w * 0.2, t + h * 0.35], fill=color, outline=outline)
        for x in (x0 + w * 0.25, r - w * 0.25):
            d.ellipse([x - h * 0.15, b - h * 0.3, x + h * 0.15, b], fill=(20, 20, 20))
    elif shape == "book":
        d.rectangle([x0, t, r, b], fill=color, outline=outline)
        d.line([x0 + w * 0.15, t, x0 + w * 0.15, b], fill=outline, width=2)
    elif shape == "cup":
        d.polygon([(x0, t + h * 0.2), (r - w * 0.25, t + h * 0.2), (r - w * 0.35, b), (x0 + w * 0.1, b)],
                  fill=color, outline=outline)
        d.arc([r - w * 0.45, t + h * 0.35, r, t + h * 0.75], 270, 90, fill=color, width=max(2, int(w // 10)))
    elif shape == "bag":
        d.rectangle([x0, t + h * 0.35, r, b], fill=color, outline=outline)
        d.arc([x0 + w * 0.2, t, r - w * 0.2, t + h * 0.7], 180, 360, fill=color, width=max(2, int(w // 10)))
    else:  # pragma: no cover - the world lists every shape above
        raise ValueError(f"unknown shape {shape}")
