"""The example dataset: images tinted by one colour.

Files: ``images/*.png``; ``questions.json`` (id, image, four choices); ``answers.json``
(``{id: choice index}``, the key of ``example-colors``); ``colors.json`` (``{id: colour
name}``, the key of ``example-describe``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from abduct import DataError
from abduct.kit import read_json

COLORS = {"red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 40, 220), "yellow": (230, 220, 30)}
QUESTIONS = "questions.json"
ANSWERS = "answers.json"
NAMES = "colors.json"


@dataclass(frozen=True)
class Question:
    qid: str
    image: Path
    choices: tuple[str, ...]


def write_dataset(out: Path, items: int = 40, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    (out / "images").mkdir(parents=True, exist_ok=True)
    names = list(COLORS)
    questions, answers, colors = [], {}, {}
    for i in range(items):
        label = int(rng.integers(len(names)))
        noise = rng.integers(-60, 60, size=(32, 32, 3))
        pixels = np.clip(np.array(COLORS[names[label]]) + noise, 0, 255).astype(np.uint8)
        image = f"images/{i:04d}.png"
        Image.fromarray(pixels).save(out / image)
        order = [int(k) for k in rng.permutation(len(names))]
        questions.append({"id": f"q{i:04d}", "image": image, "choices": [f"a {names[k]} picture" for k in order]})
        answers[f"q{i:04d}"] = order.index(label)
        colors[f"q{i:04d}"] = names[label]
    (out / QUESTIONS).write_text(json.dumps(questions, indent=1))
    (out / ANSWERS).write_text(json.dumps(answers, indent=1))
    (out / NAMES).write_text(json.dumps(colors, indent=1))


def load_questions(data_dir: Path) -> list[Question]:
    path = data_dir / QUESTIONS
    raw = read_json(path, "questions file")
    if not isinstance(raw, list):
        raise DataError("expected a JSON list of questions", file=path)
    questions = []
    for index, item in enumerate(raw):
        for field, kind in (("id", str), ("image", str), ("choices", list)):
            if not isinstance(item.get(field) if isinstance(item, dict) else None, kind):
                raise DataError(f"missing or not a {kind.__name__}", file=path, record=index, field=field)
        questions.append(Question(item["id"], data_dir / item["image"], tuple(item["choices"])))
    return questions


def read_key(path: Path, kind: type, what: str) -> dict[str, Any]:
    """An answer key ``{id: value}`` whose values are all of ``kind``."""
    key = read_json(path, "answer key")
    if not isinstance(key, dict):
        raise DataError(f"expected a JSON object {{id: {what}}}", file=path)
    for qid, value in key.items():
        if not isinstance(value, kind) or isinstance(value, bool):
            raise DataError(f"answer must be {what}", file=path, record=qid)
    return key
