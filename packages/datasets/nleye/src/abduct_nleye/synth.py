"""A synthetic NL-EYE corpus: ``test_set.csv`` (with a BOM, an unknown URL column, and the
gold given as ``hypothesis1``/``hypothesis2``) and ``images/<sample_id>/*.png``.

The learnable rule: the premise is a noisy canvas of one color; the plausible hypothesis
shows the same color (a little lighter or darker), the implausible one another color.
The gold is hypothesis 1 or 2 at random (seeded), and the upper-left pixels are noise, so
the dumb-pixel baseline is at chance. Descriptions follow the same rule in words.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from PIL import Image

from abduct.kit import building_folder

COLORS: dict[str, tuple[int, int, int]] = {
    "red": (210, 40, 40), "green": (40, 170, 60), "blue": (40, 70, 210), "yellow": (225, 205, 40),
    "purple": (130, 50, 170), "orange": (235, 135, 30),
}
CATEGORIES = {
    "reasoning_category": ("physical", "functional", "logical", "emotional", "cultural", "social"),
    "domain": ("indoor", "outdoor", "food"),
    "time_direction": ("forward", "backward", "parallel"),
    "time_duration": ("short", "long"),
}
DEFAULT_SAMPLES = 36
HEADER = ["sample_id", "premise", "hypothesis1", "hypothesis2", "gold_hypothesis", "explanation",
          "reasoning_category", "domain", "time_direction", "time_duration", "premise_image_url"]


def _image(rng: np.random.Generator, rgb: tuple[int, int, int], path: Path, size: int = 48) -> None:
    base = np.array(rgb, dtype=np.float64)
    pixels = (base + rng.normal(0, 18, size=(size, size, 3))).clip(0, 255)
    pixels[0, 0] = rng.integers(0, 256, size=3)  # the corner carries no signal
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels.astype(np.uint8)).save(path)


def synthesize(out_dir: Path, samples: int = DEFAULT_SAMPLES, seed: int = 0) -> Path:
    with building_folder(Path(out_dir)) as out:  # the corpus appears whole or not at all
        rng = np.random.default_rng(seed)
        names = list(COLORS)
        rows = []
        for i in range(samples):
            sid = f"s{i:04d}"
            color = names[int(rng.integers(len(names)))]
            other = names[int(rng.choice([k for k in range(len(names)) if names[k] != color]))]
            gold = int(rng.integers(1, 3))
            shade = float(rng.choice([0.8, 1.15]))
            similar = tuple(int(min(255, c * shade)) for c in COLORS[color])
            hyps = {gold: similar, 3 - gold: COLORS[other]}
            texts = {gold: f"the {color} scene a moment later", 3 - gold: f"a {other} scene a moment later"}
            _image(rng, COLORS[color], out / "images" / sid / "premise.png")
            for k in (1, 2):
                _image(rng, hyps[k], out / "images" / sid / f"hypothesis{k}.png")  # type: ignore[arg-type]
            cats = [values[i % len(values)] for values in CATEGORIES.values()]
            rows.append([sid, f"a {color} scene", texts[1], texts[2], f"hypothesis{gold}",
                         f"a scene keeps its color: {color} stays {color}", *cats, f"https://example.org/{sid}/premise.png"])
        with open(out / "test_set.csv", "w", encoding="utf-8-sig", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(HEADER)
            writer.writerows(rows)
        # a "SYNTHETIC" file marks the corpus as made, not released: abduct compare never draws it beside paper rows
        (out / "SYNTHETIC").write_text(f"abduct synthetic NL-EYE corpus: samples={samples} seed={seed}\n")
    return Path(out_dir)
