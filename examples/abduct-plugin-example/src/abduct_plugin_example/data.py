"""The example data: images tinted by one colour, and the two datasets that read it.

Files: ``images/*.png``; ``questions.json`` (id, image, four choices); ``answers.json``
(``{id: choice index}``, the key of ``example-colors``); ``colors.json`` (``{id: colour
name}``, the key of ``example-describe``).

The two tasks read different answer keys, so the plugin registers two datasets, each the
questions with one key: ``example-colors`` (``ChoiceQuestion``: the gold choice) and
``example-describe`` (``NamedQuestion``: the colour's name). Both take the option
``questions=FILE`` (``abduct eval ... --dataset example-colors,questions=hard.json``): another
questions file in the same folder, e.g. a subset. ``load`` returns the examples, their image
paths resolved from the data folder; ``files`` lists what results.json hashes; ``check`` is
``abduct check``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from PIL import Image

from abduct import DataError, Settings, Spec
from abduct.kit import read_json

COLORS = {"red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 40, 220), "yellow": (230, 220, 30)}
QUESTIONS = "questions.json"
ANSWERS = "answers.json"
NAMES = "colors.json"


@dataclass(frozen=True)
class Question:
    id: str  # the runner finds an example by its ``id`` (a task may declare ``example_id`` instead)
    image: Path  # resolved from the data folder when loaded
    choices: tuple[str, ...]


@dataclass(frozen=True)
class ChoiceQuestion(Question):
    label: int  # the index of the right choice (answers.json)


@dataclass(frozen=True)
class NamedQuestion(Question):
    color: str  # the name of the image's colour (colors.json)


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


def load_questions(data_dir: Path, name: str = QUESTIONS) -> list[Question]:
    path = data_dir / name
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


class KeyedQuestions:
    """The questions with one answer key; a subclass names the key file and builds its examples."""

    key_file: ClassVar[str]
    key_kind: ClassVar[type]
    key_what: ClassVar[str]  # what a key's value is, for errors ("an integer choice index")
    missing: ClassVar[str]  # what a question without a key entry lacks ("answer")

    def __init__(self, questions: str = QUESTIONS) -> None:
        self.questions = questions

    def keyed(self, data_dir: Path) -> tuple[list[Question], dict[str, Any]]:
        questions = load_questions(data_dir, self.questions)
        key = read_key(data_dir / self.key_file, self.key_kind, self.key_what)
        missing = [q.id for q in questions if q.id not in key]
        if missing:
            raise DataError(f"question has no {self.missing}", file=data_dir / self.key_file, record=missing[0])
        return questions, key

    def files(self, data_dir: Path, split: str) -> list[Path]:
        return [data_dir / self.questions, data_dir / self.key_file]

    def check(self, data_dir: Path) -> list[str]:
        try:
            self.keyed(data_dir)
        except DataError as problem:
            return [str(problem)]
        return []


class ChoiceQuestions(KeyedQuestions):
    """``example-colors``: each question with the index of its right choice."""

    key_file, key_kind, key_what, missing = ANSWERS, int, "an integer choice index", "answer"

    def load(self, data_dir: Path, split: str) -> list[ChoiceQuestion]:
        questions, key = self.keyed(data_dir)
        return [ChoiceQuestion(q.id, q.image, q.choices, key[q.id]) for q in questions]


class NamedQuestions(KeyedQuestions):
    """``example-describe``: each question with the name of its image's colour."""

    key_file, key_kind, key_what, missing = NAMES, str, "a colour name", "colour name"

    def load(self, data_dir: Path, split: str) -> list[NamedQuestion]:
        questions, key = self.keyed(data_dir)
        return [NamedQuestion(q.id, q.image, q.choices, key[q.id]) for q in questions]


def make_choice_questions(spec: Spec, settings: Settings, *, questions: str = QUESTIONS) -> ChoiceQuestions:
    """``example-colors[,questions=FILE]``: the option is a keyword-only parameter, as for models."""
    return ChoiceQuestions(questions)


def make_named_questions(spec: Spec, settings: Settings, *, questions: str = QUESTIONS) -> NamedQuestions:
    return NamedQuestions(questions)
