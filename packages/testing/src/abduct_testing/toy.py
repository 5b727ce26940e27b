"""A toy benchmark for tests that need a whole run, not a particular one: ``toy.json`` holds
questions over generated images, each with four choices, a label and a caption; ``toy-choice``
asks the model to pick the right choice. ``ToyPlugin`` registers both (add it to a registry
with ``build_registry(extra_plugins=[("toy", ToyPlugin())])``); a test plugin may subclass it
to add its own tasks and models."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from abduct import (
    COUNT,
    Choice,
    Choose,
    DataError,
    Evaluation,
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
                          units={"accuracy": UnitScores.means("question", {r["id"]: r["correct"] for r in answers})})

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        preds, key = read_json(predictions), read_json(answer_key)
        for qid in key:
            if qid not in preds:
                raise DataError("missing prediction", file=predictions, record=qid)
        return {"accuracy": 100.0 * float(np.mean([preds[q] == key[q] for q in key]))}


def make_dataset(spec: Spec, settings: Settings) -> ToyDataset:
    return ToyDataset()


def make_choice(spec: Spec, settings: Settings) -> ToyChoice:
    return ToyChoice()


class ToyPlugin:
    """Registers the dataset ``toy`` and the task ``toy-choice``."""

    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("toy", "Toy questions over generated images", "abduct_testing.toy:make_dataset")

    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("toy-choice", "Toy multiple choice", "abduct_testing.toy:make_choice")


def install_toy_registry() -> Registry:
    """The process-wide registry with the toy benchmark added (as the CLI will see it); pair it
    with ``abduct_testing.registry_fixture``, which resets the registry after each test."""
    from abduct.host import build_registry, reset_registry

    registry = build_registry(extra_plugins=[("toy", ToyPlugin())])
    reset_registry(registry)
    return registry
