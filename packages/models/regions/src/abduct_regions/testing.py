"""What the cross-encoders' tests share (no downloads, no benchmark packages): the test kit's
toy benchmark (its pairs with regions and clues, ``toy-match`` to evaluate), a tiny 4-choice
dataset in the shape CoSIm training reads, and a test plugin registering it, so training runs
through the registry as it does for users."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abduct import Registration, Settings, Spec, VisualInput, hookimpl
from abduct.host import Registry
from abduct.kit import read_json
from abduct_testing import (
    data_fixture,
    fast_one_line_failure,
    make_images,
    private_cache_fixture,
    registry_fixture,
)
from abduct_testing.toy import COLORS, install_toy_registry, write_toy_pairs


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


def make_choices(spec: Spec, settings: Settings) -> ChoicesFile:
    return ChoicesFile()


class TestPlugin:
    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("toy-choices", "tiny four-way choices", "abduct_regions.testing:make_choices")


def eval_with_changed_file(family: Any, directory: Path, data: Path, name: str, change: dict[str, Any],
                           within: float = 10.0) -> str:
    """``family``'s tiny checkpoint written to ``directory`` with ``change`` merged into its JSON
    file ``name``, evaluated by ``abduct eval toy-match``: the one line it must fail with, exit 2
    within ``within`` seconds (a hostile size must be refused before a network is built)."""
    from abduct_regions.family import TINY_INPUTS

    directory.mkdir(parents=True)
    family.save_dir(*family.build_tiny(0), directory)
    TINY_INPUTS.save(directory)
    values = read_json(directory / name)
    (directory / name).write_text(json.dumps({**values, **change}))
    return fast_one_line_failure(["eval", "toy-match", "--model", f"{family.name}:{directory}", "--data", str(data),
                                  "--out", str(directory.parent / "out"), "--quiet", "--no-cache"], within)


def install_test_plugin() -> Registry:
    """The installed plugins, the toy benchmark and the test plugin, as the process-wide registry."""
    return install_toy_registry(("abduct-regions-tests", TestPlugin()))


def cross_encoder_fixtures() -> tuple[Any, Any, Any, Any]:
    """The conftest fixtures every cross-encoder package's tests use: a private feature cache,
    the test plugin's registry and the tiny pair and choice datasets."""
    return (private_cache_fixture(), registry_fixture(install_test_plugin),
            data_fixture(write_toy_pairs, "pair_data"), data_fixture(write_choice_data, "choice_data"))
