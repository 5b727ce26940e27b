"""What the cross-encoders' tests share (no downloads, no benchmark packages): a tiny pair
dataset with regions and clues, a tiny 4-choice dataset, and a test plugin registering both,
so training runs through the registry as it does for users."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from abduct import (
    COUNT,
    Choose,
    Evaluation,
    GroundedText,
    Records,
    Registration,
    RunInfo,
    Settings,
    Spec,
    Stage,
    VisualInput,
    hookimpl,
    percent,
)
from abduct.host import Registry, build_registry, reset_registry
from abduct.kit import Choice, accuracy, read_json
from abduct_testing import (
    PairsFile,
    data_fixture,
    fast_one_line_failure,
    make_images,
    private_cache_fixture,
    registry_fixture,
    write_pairs,
)

COLORS = ("red", "green", "blue", "yellow")
RGB = {"red": (220, 30, 30), "green": (30, 180, 60), "blue": (30, 60, 220), "yellow": (250, 220, 20)}
BOXES = ([1, 1, 6, 8], [9, 2, 6, 8])  # left, right: [left, top, width, height]


def _draw(path: Path, size: tuple[int, int], colors: tuple[str, str]) -> None:
    """A grey image with a coloured box on the left and one on the right."""
    pixels = np.full((size[1], size[0], 3), 128, dtype=np.uint8)
    for (x, y, w, h), color in zip(BOXES, colors):
        pixels[y : y + h, x : x + w] = RGB[color]
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)


def write_pair_data(directory: Path, train_images: int = 8, val_images: int = 3, size: tuple[int, int] = (16, 12)) -> Path:
    """Two (region, clue, inference) pairs per image, one per coloured box (the clue names
    its colour, the inference its colour and side); validation pairs in groups of three."""
    records: dict[str, list[dict[str, Any]]] = {"train": [], "val": []}
    for i in range(train_images + val_images):
        split = "train" if i < train_images else "val"
        colors = (COLORS[i % 4], COLORS[(i + 1 + i // 4) % 4])
        path = directory / "images" / f"img{i}.png"
        _draw(path, size, colors)
        for k in range(2):
            n = len(records[split])
            records[split].append({
                "id": f"{split}-{n}", "image": str(path.relative_to(directory)), "box": BOXES[k],
                "clue": f"a {colors[k]} ball", "inference": f"the {colors[k]} ball is {('left', 'right')[k]}",
                "group": str(n // 3) if split == "val" else None,
            })
    return write_pairs(directory, records)


@dataclass(frozen=True)
class ChoiceRecord:
    id: str
    image: str
    question: str
    choices: tuple[str, ...]
    label: int

    def visual(self) -> VisualInput:
        return VisualInput(self.image, context=self.question)


def write_choice_data(directory: Path, records: int = 12, size: tuple[int, int] = (16, 12)) -> Path:
    """Records with four choices; the gold choice names the colour the question names."""
    splits: dict[str, list[dict[str, Any]]] = {"train": [], "val": []}
    paths = make_images(directory / "images", 4, size=size)
    for i in range(records):
        split = "train" if i < records * 2 // 3 else "val"
        color = COLORS[i % 4]
        choices = [f"it is {c}" for c in COLORS]
        splits[split].append({"id": str(i), "image": str(paths[i % 4].relative_to(directory)),
                              "question": f"what if the ball were {color}", "choices": choices, "label": i % 4})
    (directory / "choices.json").write_text(json.dumps(splits))
    return directory


class ChoicesFile:
    """A multiple-choice dataset in the shape ``abduct train --task cosim`` reads."""

    def load(self, data_dir: Path, split: str) -> list[ChoiceRecord]:
        raw = read_json(Path(data_dir) / "choices.json", "choices file")[split]
        return [ChoiceRecord(r["id"], str(Path(data_dir) / r["image"]), r["question"], tuple(r["choices"]), r["label"])
                for r in raw]

    def check(self, data_dir: Path) -> list[str]:
        return []


class ToySides:
    """Each pair of ``write_pair_data`` against the other box's inference on its image: which
    side is the ball of this colour on (a task, so ``abduct eval`` runs a cross-encoder). It
    reads the ``toy-pairs`` dataset; the other inferences come from the whole split."""

    default_split = "val"
    dataset = "toy-pairs"
    limit_unit = "pairs"
    metric_info = {"accuracy": percent(chance=50.0), "n": COUNT}

    def plan(self, pairs: Sequence[GroundedText], run: RunInfo) -> list[Stage]:
        by_image: dict[str | None, list[str]] = {}
        for p in run.corpus:
            by_image.setdefault(p.visual.media, []).append(p.text)
        items = [Choice(p.id, p.visual, (p.text, *(t for t in by_image[p.visual.media] if t != p.text)), 0)
                 for p in pairs]
        return [Stage("sides", Choose(items))]

    def finish(self, pairs: Sequence[GroundedText], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = records["sides"]
        return Evaluation({"accuracy": accuracy(answers), "n": len(answers)}, answers)


def make_toy_sides(spec: Spec, settings: Settings) -> ToySides:
    return ToySides()


def make_pairs(spec: Spec, settings: Settings) -> PairsFile:
    return PairsFile()


def make_choices(spec: Spec, settings: Settings) -> ChoicesFile:
    return ChoicesFile()


class TestPlugin:
    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("toy-pairs", "tiny pairs with regions and clues", "abduct_regions.testing:make_pairs")
        yield Registration("toy-choices", "tiny four-way choices", "abduct_regions.testing:make_choices")

    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("toy-sides", "which side each ball's inference is on", "abduct_regions.testing:make_toy_sides")


def eval_with_changed_file(family: Any, directory: Path, data: Path, name: str, change: dict[str, Any],
                           within: float = 10.0) -> str:
    """``family``'s tiny checkpoint written to ``directory`` with ``change`` merged into its JSON
    file ``name``, evaluated by ``abduct eval toy-sides``: the one line it must fail with, exit 2
    within ``within`` seconds (a hostile size must be refused before a network is built)."""
    from abduct_regions.family import TINY_INPUTS

    directory.mkdir(parents=True)
    family.save_dir(*family.build_tiny(0), directory)
    TINY_INPUTS.save(directory)
    values = read_json(directory / name)
    (directory / name).write_text(json.dumps({**values, **change}))
    return fast_one_line_failure(["eval", "toy-sides", "--model", f"{family.name}:{directory}", "--data", str(data),
                                  "--out", str(directory.parent / "out"), "--quiet", "--no-cache"], within)


def install_test_plugin() -> Registry:
    """The installed plugins plus the test plugin, as the process-wide registry."""
    registry = build_registry(extra_plugins=[("abduct-regions-tests", TestPlugin())])
    reset_registry(registry)
    return registry


def cross_encoder_fixtures() -> tuple[Any, Any, Any, Any]:
    """The conftest fixtures every cross-encoder package's tests use: a private feature cache,
    the test plugin's registry and the tiny pair and choice datasets."""
    return (private_cache_fixture(), registry_fixture(install_test_plugin),
            data_fixture(write_pair_data, "pair_data"), data_fixture(write_choice_data, "choice_data"))
