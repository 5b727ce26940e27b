"""A synthetic CoSIm corpus in the exact release schema, with images.

Each image is a gray, noisy canvas with one colored square (red, green, blue or yellow).
The question asks the square's color after the scene change ("What color is the square
now?", or the yes/no form "Is the square blue now?"); the four choices name the four colors
(``it is red.``, or ``yes, it is blue.`` / ``no, it is red.``), shuffled. The change is one of

- **paint** "Paint the square D." (D differs from the image's color): the text decides;
- **swap** "Give the square the opposite color ...": the answer is the opposite (red/green,
  blue/yellow) of the color *in the image*: image and change decide together;
- **keep** "Put a small lamp beside the square.": the answer is the image's color;

followed by 0-3 filler sentences (so every sentence-count bucket occurs). The initial
response tells nothing about the color. So a model that reads only the text can be sure
only on paint (about 50% overall), one that reads only the image only on keep (about
33%), and one that reads both can be right every time.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

from abduct.kit import building_folder

COLORS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40), "green": (40, 180, 60), "blue": (40, 70, 220), "yellow": (230, 210, 40),
}
OPPOSITE = {"red": "green", "green": "red", "blue": "yellow", "yellow": "blue"}
KINDS = ("paint", "swap", "keep")
FILLERS = ("The background stays gray.", "Nothing else in the room moves.", "The lighting does not change.")
RESPONSES = ("I can see the square clearly.", "Look at the square in the picture.", "The square is in plain view.")
DEFAULT_TRAIN, DEFAULT_VAL = 90, 60


def _image(rng: np.random.Generator, color: str, path: Path, size: int = 64) -> None:
    pixels = rng.normal(128, 25, size=(size, size, 3)).clip(0, 255).astype(np.uint8)
    side = int(rng.integers(22, 38))
    x, y = (int(v) for v in rng.integers(4, size - side - 4, size=2))
    pixels[y : y + side, x : x + side] = COLORS[color]
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path, quality=95)


def _record(rng: np.random.Generator, i: int, split: str, out: Path) -> dict[str, object]:
    names = list(COLORS)
    color = names[int(rng.integers(4))]
    kind = KINDS[i % 3]
    if kind == "paint":
        target = names[int(rng.choice([k for k in range(4) if names[k] != color]))]
        change, final = f"Paint the square {target}.", target
    elif kind == "swap":
        change = ("Give the square the opposite color: red becomes green, green becomes red, "
                  "blue becomes yellow and yellow becomes blue.")
        final = OPPOSITE[color]
    else:
        change, final = "Put a small lamp beside the square.", color
    change = " ".join([change, *FILLERS[: int(rng.integers(0, 4))]])
    order = [names[k] for k in rng.permutation(4)]
    if rng.random() < 0.5:
        asked = names[int(rng.integers(4))]
        question = f"Is the square {asked} now?"
        choices = [f"{'yes' if c == asked else 'no'}, it is {c}." for c in order]
    else:
        question = "What color is the square now?"
        choices = [f"it is {c}." for c in order]
    folder, img_fn = f"genome_{1 + i % 3}", f"{(2 if split == 'val' else 1) * 1_000_000 + i}.jpg"
    _image(rng, color, out / "images" / folder / img_fn)
    return {"answer_choices": choices, "answer_label": order.index(final), "answer_orig": RESPONSES[i % 3],
            "change": change, "folder": folder, "img_fn": img_fn, "question": question,
            "type": "hamlet" if split == "val" else "normal"}


def synthesize(out_dir: Path, train: int = DEFAULT_TRAIN, val: int = DEFAULT_VAL, seed: int = 0) -> Path:
    """Write ``train.json``, ``val.json`` and their images under ``out_dir``; return it."""
    with building_folder(Path(out_dir)) as out:  # the corpus appears whole or not at all
        for split, count in (("train", train), ("val", val)):
            rng = np.random.default_rng([seed, 0 if split == "train" else 1])
            records = [_record(rng, i, split, out) for i in range(count)]
            (out / f"{split}.json").write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
        # a "SYNTHETIC" file marks the corpus as made, not released: abduct compare never draws it beside paper rows
        (out / "SYNTHETIC").write_text(f"abduct synthetic CoSIm corpus: train={train} val={val} seed={seed}\n")
    return Path(out_dir)
