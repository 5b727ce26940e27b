"""A synthetic WHOOPS! corpus from a small world with one commonsense rule.

**The world.** Four objects, each with its shape and its natural color: the sun (a yellow
circle), a leaf (a green triangle), a brick (a red square), a whale (a blue ellipse), drawn on
a noisy gray, beige or pink background. **The rule**: an object shown in another object's
color is weird. Every WHOOPS! image breaks it (a green sun); its normal counterpart is the same
picture in the object's natural color, and a second normal ("natural") picture shows the
object elsewhere. Captions, under-specified captions, explanations and question-answer pairs
are written from the same facts, so every task is learnable: identification from the
object's color given its shape, matching because only detailed captions name the color.

Writes ``whoops_dataset.csv`` in the released schema (BOM; list columns as JSON strings),
``images/<image_id>.png``, and the identification release:
``identification/annotated_normal_natural_stranged.csv`` (``natural_image``,
``normal_image``, ``strange_image``: file names) with its pictures beside it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from abduct.kit import atomic_write_text, building_folder
from abduct_whoops.records import COLUMNS

OBJECTS = {  # name: (shape, natural color, commonsense category)
    "sun": ("circle", "yellow", "Astronomy"),
    "leaf": ("triangle", "green", "Biology"),
    "brick": ("square", "red", "Everyday Knowledge"),
    "whale": ("ellipse", "blue", "Zoology"),
}
COLORS = {"yellow": (230, 210, 40), "green": (40, 170, 60), "red": (210, 40, 40), "blue": (40, 70, 210)}
BACKGROUNDS = {"gray": (128, 128, 128), "beige": (225, 210, 170), "pink": (240, 175, 200)}
DEFAULT_IMAGES = 40
SIZE = 64
IDENTIFICATION_DIR = "identification"
IDENTIFICATION_CSV = "annotated_normal_natural_stranged.csv"


def draw(path: Path, shape: str, color: str, background: str, box: tuple[int, int, int, int],
         rng: np.random.Generator) -> None:
    pixels = np.array(BACKGROUNDS[background], dtype=np.float64) + rng.normal(0, 10, size=(SIZE, SIZE, 3))
    image = Image.fromarray(pixels.clip(0, 255).astype(np.uint8))
    pen = ImageDraw.Draw(image)
    left, top, right, bottom = box
    fill = COLORS[color]
    if shape == "circle":
        pen.ellipse(box, fill=fill)
    elif shape == "ellipse":
        middle = (top + bottom) // 2
        pen.ellipse((left, middle - (bottom - top) // 4, right, middle + (bottom - top) // 4), fill=fill)
    elif shape == "square":
        pen.rectangle(box, fill=fill)
    else:
        pen.polygon([((left + right) // 2, top), (right, bottom), (left, bottom)], fill=fill)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


def _box(rng: np.random.Generator) -> tuple[int, int, int, int]:
    side = int(rng.integers(24, 40))
    left, top = (int(v) for v in rng.integers(2, SIZE - side - 2, size=2))
    return left, top, left + side, top + side


def texts(name: str, color: str, background: str) -> dict[str, object]:
    """The annotations of a picture of ``name`` in ``color`` on ``background``."""
    shape, natural, _ = OBJECTS[name]
    return {
        "selected_caption": f"a {color} {name} on a {background} background",
        "crowd_captions": [f"a {color} {name} on a {background} background", f"a {color} {name}",
                           f"there is a {color} {name} in the picture", f"a picture of a {color} {name}",
                           f"a {color} {shape} shaped {name}"],
        "crowd_underspecified_captions": [f"a {name}", f"a {name} on a background", f"a picture of a {name}",
                                          "an object", f"a {shape}"],
        "designer_explanation": f"a {name} is {natural}, not {color}",
        "crowd_explanations": [f"a {name} should be {natural}", f"the {name} has the wrong color",
                               f"a real {name} is never {color}", f"{name}s are {natural}",
                               f"the {name} is {color} instead of {natural}"],
        "question_answering_pairs": [[f"What color is the {name}?", color], ["What object is shown?", name],
                                     ["What color is the background?", background],
                                     ["What shape is the object?", shape]],
    }


def synthesize(out_dir: Path, images: int = DEFAULT_IMAGES, seed: int = 0) -> Path:
    """Write the corpus (see the module docstring) into ``out_dir`` and return it."""
    with building_folder(Path(out_dir)) as out:  # the corpus appears whole or not at all
        rng = np.random.default_rng(seed)
        names = list(OBJECTS)
        rows, pairs = [], []
        for i in range(images):
            image_id = f"w{i:04d}"
            name = names[i % len(names)]
            shape, natural, category = OBJECTS[name]
            color = str(rng.choice([c for c in COLORS if c != natural]))
            background = str(rng.choice(list(BACKGROUNDS)))
            box = _box(rng)
            state = int(rng.integers(2**31))  # the same noise for the weird picture and its normal counterpart
            draw(out / "images" / f"{image_id}.png", shape, color, background, box, np.random.default_rng(state))
            ident = out / IDENTIFICATION_DIR
            draw(ident / f"{image_id}.png", shape, color, background, box, np.random.default_rng(state))
            draw(ident / f"normal_{image_id}.png", shape, natural, background, box, np.random.default_rng(state))
            draw(ident / f"natural_{image_id}.png", shape, natural, background, _box(rng), rng)
            fields = texts(name, color, background)
            row = {"image": f"{image_id}.png", "commonsense_category": category, "image_id": image_id,
                   "image_designer": "synthetic", **fields}
            rows.append([json.dumps(row[c]) if isinstance(row[c], list) else str(row[c]) for c in COLUMNS])
            pairs.append([f"natural_{image_id}.png", f"normal_{image_id}.png", f"{image_id}.png"])
        _write_csv(out / "whoops_dataset.csv", list(COLUMNS), rows, bom=True)
        _write_csv(out / IDENTIFICATION_DIR / IDENTIFICATION_CSV, ["natural_image", "normal_image", "strange_image"],
                   pairs, bom=False)
        # a "SYNTHETIC" file marks the corpus as made, not released: abduct compare never draws it beside paper rows
        atomic_write_text(out / "SYNTHETIC", f"abduct synthetic WHOOPS! corpus: images={images} seed={seed}\n")
    return Path(out_dir)


def _write_csv(path: Path, header: list[str], rows: list[list[str]], bom: bool) -> None:
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    atomic_write_text(path, ("\ufeff" if bom else "") + buffer.getvalue())
