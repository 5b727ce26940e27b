"""Helpers shared by the tests, made on the fly (no downloads, no Sherlock): a tiny
clue -> inference pair dataset and a multiple-choice task over it, registered by a test
plugin, so training and evaluation run through the registry as they do for users."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

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
    hookimpl,
    percent,
)
from abduct.host import Registry, build_registry, reset_registry
from abduct.kit import Choice, accuracy
from abduct_testing import write_pairs

COLORS = ("red", "blue", "green", "yellow")
THINGS = {"umbrella": "it rained recently", "ball": "children played here", "cup": "someone drank coffee",
          "hat": "the sun is strong"}


def write_pair_data(directory: Path, train: int = 48, val: int = 16) -> Path:
    """Clues ``a COLOR THING`` and inferences that follow from the thing (and name the colour)."""
    records: dict[str, list[dict[str, Any]]] = {"train": [], "val": []}
    combos = [(c, t) for t in THINGS for c in COLORS]
    for i in range(train + val):
        split = "train" if i < train else "val"
        color, thing = combos[i % len(combos)]
        records[split].append({"id": f"{split}-{len(records[split])}", "clue": f"a {color} {thing}",
                               "inference": f"{THINGS[thing]} near the {color} {thing}"})
    return write_pairs(directory, records)


class ToyClues:
    """Each validation clue against four inferences (its own first-seen position is the label),
    the others drawn from the whole split. It reads the ``toy-pairs`` dataset."""

    default_split = "val"
    dataset = "toy-pairs"
    limit_unit = "pairs"
    metric_info = {"accuracy": percent(chance=25.0), "n": COUNT}

    def plan(self, pairs: Sequence[GroundedText], run: RunInfo) -> list[Stage]:
        texts = list(dict.fromkeys(p.text for p in run.corpus))
        items = []
        for i, p in enumerate(pairs):
            others = [t for t in texts if t != p.text][i % 3 : i % 3 + 3]
            candidates = tuple(others[: i % 4] + [p.text] + others[i % 4 :])
            items.append(Choice(p.id, p.visual, candidates, candidates.index(p.text)))
        return [Stage("clues", Choose(items, per_unit=4))]

    def finish(self, pairs: Sequence[GroundedText], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = records["clues"]
        return Evaluation({"accuracy": accuracy(answers), "n": len(answers)}, answers)


def make_toy_clues(spec: Spec, settings: Settings) -> ToyClues:
    return ToyClues()


class T5TestPlugin:
    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("toy-pairs", "Tiny clue -> inference pairs", "abduct_testing:make_pairs_file")

    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("toy-clues", "Pick each clue's inference among four", "t5_helpers:make_toy_clues")


def install_test_plugin() -> Registry:
    """Make the test plugin part of the process-wide registry (``abduct.cli.main`` uses it)."""
    registry = build_registry([("t5-test", T5TestPlugin())])
    reset_registry(registry)
    return registry
