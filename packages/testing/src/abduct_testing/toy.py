"""The toy benchmark, for tests that need a whole run or a training run, not a particular
benchmark; it needs abduct-core, numpy and pillow only.

- ``toy`` / ``toy-choice`` (``write_toy_data``): ``toy.json`` holds questions over generated
  images, each with four choices, a label and a caption; the task asks the model to pick the
  right choice.
- ``toy-pairs`` / ``toy-match`` (``write_toy_pairs``): training pairs as a trainer reads them
  (``pairs()``: image, a region, the clue as context, the inference as text; validation pairs in
  retrieval groups), drawn so that a model can learn them (a grey image with a coloured ball on
  each side: the clue names a ball's colour, the inference its colour and side); the task
  matches each pair to its inference among its group's.

``ToyPlugin`` registers all four (``install_toy_registry`` makes them part of the process-wide
registry, with a test's own plugins); a test plugin may subclass it to add its own tasks and
models."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from abduct import (
    COUNT,
    Choice,
    Choose,
    DataError,
    Evaluation,
    GroundedText,
    Records,
    Registration,
    RunInfo,
    Settings,
    Spec,
    Stage,
    UnitScores,
    VisualInput,
    hookimpl,
    percent,
)
from abduct.kit import accuracy, read_json

if TYPE_CHECKING:
    from abduct.host import Registry


def write_toy_data(directory: Path, items: int = 12) -> Path:
    """``items`` questions over as many generated images, in ``directory``; returns it."""
    from abduct_testing import make_images

    paths = make_images(directory / "images", count=items)
    records = [
        {"id": f"q{i:03d}", "image": f"images/{p.name}", "question": f"which one, {i}?",
         "choices": [f"choice {i} {k}" for k in range(4)], "label": i % 4, "caption": f"image number {i % 3}"}
        for i, p in enumerate(paths)
    ]
    (directory / "toy.json").write_text(json.dumps(records))
    return directory


class ToyDataset:
    """``toy.json``: questions over images, each with four choices, a label and a caption."""

    def load(self, data_dir: Path, split: str) -> list[dict[str, Any]]:
        return [{**it, "image": str(data_dir / it["image"])} for it in read_json(data_dir / "toy.json")]

    def files(self, data_dir: Path, split: str) -> list[Path]:
        return [data_dir / "toy.json"]

    def check(self, data_dir: Path) -> list[str]:
        return [] if (data_dir / "toy.json").is_file() else [f"{data_dir / 'toy.json'}: not found"]


class ToyChoice:
    """Four candidates per image, the question as context; either may go unread (a text-only
    model, a chance model)."""

    default_split = "val"
    dataset = "toy"
    limit_unit = "questions"
    optional_inputs = frozenset({"image", "context"})
    metric_info = {"accuracy": percent(chance=25.0), "n": COUNT}

    def plan(self, examples: Sequence[dict[str, Any]], run: RunInfo) -> list[Stage]:
        items = [Choice(it["id"], VisualInput(it["image"], context=it["question"]), tuple(it["choices"]), it["label"])
                 for it in examples]
        return [Stage("questions", Choose(items, per_unit=1))]

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = records["questions"]
        return Evaluation({"accuracy": accuracy(answers), "n": len(answers)}, answers,
                          units={"accuracy": UnitScores.means("question", {r.id: r.correct for r in answers})})

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        preds, key = read_json(predictions), read_json(answer_key)
        for qid in key:
            if qid not in preds:
                raise DataError("missing prediction", file=predictions, record=qid)
        return {"accuracy": 100.0 * float(np.mean([preds[q] == key[q] for q in key]))}


COLORS = ("red", "green", "blue", "yellow")
_RGB = {"red": (220, 30, 30), "green": (30, 180, 60), "blue": (30, 60, 220), "yellow": (250, 220, 20)}
BOXES = ([1, 1, 6, 8], [9, 2, 6, 8])  # the left and the right ball: [left, top, width, height]
SIDES = ("left", "right")


def _draw(path: Path, size: tuple[int, int], colors: tuple[str, str]) -> None:
    """A grey image with a coloured ball (a box) on the left and one on the right."""
    pixels = np.full((size[1], size[0], 3), 128, dtype=np.uint8)
    for (x, y, w, h), color in zip(BOXES, colors):
        pixels[y : y + h, x : x + w] = _RGB[color]
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)


def write_toy_pairs(directory: Path, train_images: int = 8, val_images: int = 3, *, group: int = 3,
                    sizes: Sequence[tuple[int, int]] = ((16, 12),), images: bool = True) -> Path:
    """Two pairs per image, one per ball: the region is the ball, the clue ``a COLOUR ball``, the
    inference ``the COLOUR ball is SIDE``; validation pairs come in retrieval groups of ``group``.
    Image ``i`` has size ``sizes[i % len(sizes)]`` (at least 16 x 12); ``images=False`` writes
    the same pairs as text only (the clue as context), for text models."""
    from abduct_testing import write_pairs

    records: dict[str, list[dict[str, Any]]] = {"train": [], "val": []}
    for i in range(train_images + val_images):
        split = "train" if i < train_images else "val"
        colors = (COLORS[i % 4], COLORS[(i + 1 + i // 4) % 4])
        path = directory / "images" / f"img{i}.png"
        if images:
            _draw(path, sizes[i % len(sizes)], colors)
        for k in range(2):
            n = len(records[split])
            record: dict[str, Any] = {"id": f"{split}-{n}", "clue": f"a {colors[k]} ball", "inference": f"the {colors[k]} ball is {SIDES[k]}",
                      "group": str(n // group) if split == "val" else None}
            if images:
                record.update(image=str(path.relative_to(directory)), box=BOXES[k])
            records[split].append(record)
    return write_pairs(directory, records)


class ToyMatch:
    """Each pair of ``write_toy_pairs`` against the inferences of its group (taken from the whole
    split, so ``--limit`` keeps each group's candidates); the clue comes along as context, which
    a model may go without."""

    default_split = "val"
    dataset = "toy-pairs"
    limit_unit = "pairs"
    optional_inputs = frozenset({"context"})
    metric_info = {"accuracy": percent(), "n": COUNT}  # chance: one over the group's size

    def plan(self, pairs: Sequence[GroundedText], run: RunInfo) -> list[Stage]:
        groups: dict[str | None, list[str]] = {}
        for pair in run.corpus:
            groups.setdefault(pair.group, []).append(pair.text)
        items = [Choice(p.id, p.visual, tuple(groups[p.group]), groups[p.group].index(p.text)) for p in pairs]
        return [Stage("match", Choose(items, per_unit=4))]

    def finish(self, pairs: Sequence[GroundedText], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = records["match"]
        return Evaluation({"accuracy": accuracy(answers), "n": len(answers)}, answers)


def make_dataset(spec: Spec, settings: Settings) -> ToyDataset:
    return ToyDataset()


def make_choice(spec: Spec, settings: Settings) -> ToyChoice:
    return ToyChoice()


def make_match(spec: Spec, settings: Settings) -> ToyMatch:
    return ToyMatch()


class ToyPlugin:
    """Registers the datasets ``toy`` and ``toy-pairs`` and the tasks ``toy-choice`` and ``toy-match``."""

    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("toy", "Toy questions over generated images", "abduct_testing.toy:make_dataset")
        yield Registration("toy-pairs", "Toy (image, region, clue, inference) pairs", "abduct_testing:make_pairs_file")

    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("toy-choice", "Toy multiple choice", "abduct_testing.toy:make_choice")
        yield Registration("toy-match", "Match each toy pair to its inference", "abduct_testing.toy:make_match")


def install_toy_registry(*plugins: tuple[str, object]) -> Registry:
    """The process-wide registry with the toy benchmark and a test's own ``plugins`` ((name,
    plugin) pairs) added, as the CLI will see it; pair it with ``abduct_testing.registry_fixture``,
    which resets the registry after each test."""
    from abduct.host import build_registry, reset_registry

    registry = build_registry(extra_plugins=[("toy", ToyPlugin()), *plugins])
    reset_registry(registry)
    return registry
