"""A minimal in-test plugin: a multiple-choice task over generated images, and a slow scorer."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from abduct import Evaluation, Registration, VisualInput, hookimpl
from abduct.baselines import RandomScorer
from abduct.errors import DataError
from abduct.io import read_json
from abduct.runner import Run
from abduct.spec import ModelOptions, ModelSpec
from abduct.testing import make_images


def write_toy_data(directory: Path, items: int = 12) -> Path:
    paths = make_images(directory / "images", count=items)
    records = [
        {"id": f"q{i:03d}", "image": f"images/{p.name}", "choices": [f"choice {i} {k}" for k in range(4)], "label": i % 4}
        for i, p in enumerate(paths)
    ]
    (directory / "toy.json").write_text(json.dumps(records))
    return directory


class ToyTask:
    default_split = "val"

    def evaluate(self, model: object, run: Run) -> Evaluation:
        path = run.data_dir / "toy.json"
        items = run.apply_limit(read_json(path))
        engine = run.require_engine()

        def score_one(item: dict[str, Any]) -> list[dict[str, Any]]:
            visual = VisualInput(str(run.data_dir / item["image"]))
            scores = engine.score_matrix([visual], item["choices"])[0]
            return [{"id": item["id"], "scores": scores.tolist(), "correct": int(np.argmax(scores)) == item["label"]}]

        records = run.map_units("questions", [(it["id"], it) for it in items], score_one)
        accuracy = 100.0 * float(np.mean([r["correct"] for r in records]))
        return Evaluation({"accuracy": accuracy, "n": len(records)}, records, data_files=[path])

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        preds, key = read_json(predictions), read_json(answer_key)
        for qid in key:
            if qid not in preds:
                raise DataError("missing prediction", file=predictions, record=qid)
        return {"accuracy": 100.0 * float(np.mean([preds[q] == key[q] for q in key]))}


class SlowRandom(RandomScorer):
    """Random scores, slowly: gives a test time to kill a run in the middle."""

    def __init__(self, seed: int, delay: float) -> None:
        super().__init__(seed)
        self.delay = delay

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.delay)
        return super().score_matrix(visuals, texts)


def make_task() -> ToyTask:
    return ToyTask()


def make_slow(spec: ModelSpec, options: ModelOptions) -> SlowRandom:
    return SlowRandom(options.seed, float(spec.argument or 0.05))


class ToyPlugin:
    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("toy-choice", "Toy multiple choice", "toy_plugin:make_task")

    @hookimpl
    def register_scorers(self) -> Iterator[Registration]:
        yield Registration("slow-random", "Random, slowly", "toy_plugin:make_slow")
