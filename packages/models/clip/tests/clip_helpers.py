"""Helpers shared by the tests, made on the fly (no downloads, no Sherlock): small images
with regions, and a test plugin with a tiny pair dataset, a dataset without pairs and a
matching task, so training and evaluation run through the registry as they do for users."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import (
    COUNT,
    Box,
    Choose,
    Evaluation,
    GroundedText,
    Records,
    Region,
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
from abduct.kit import Choice, accuracy
from abduct_testing import make_images, write_pairs

SIZES = [(96, 64), (64, 96), (80, 80)]


def make_examples(directory: Path, count: int = 8, seed: int = 0) -> list[VisualInput]:
    """``count`` visual inputs over landscape, portrait and square images, each with a region."""
    visuals = []
    for i in range(count):
        w, h = SIZES[i % len(SIZES)]
        (path,) = make_images(directory / f"set{i}", 1, size=(w, h), seed=seed + i)
        box = Box(2 + 3 * (i % 5), 4 + 2 * (i % 3), 20 + i, 16)
        visuals.append(VisualInput(str(path), Region((box,))))
    return visuals


def write_pair_data(directory: Path, train_images: int = 12, val_images: int = 4, seed: int = 0) -> Path:
    """A tiny pair dataset: two (region, clue, inference) pairs per image; the validation
    pairs come in retrieval groups of four."""
    records: dict[str, list[dict[str, Any]]] = {"train": [], "val": []}
    for i in range(train_images + val_images):
        split = "train" if i < train_images else "val"
        w, h = SIZES[i % len(SIZES)]
        (path,) = make_images(directory / "images" / f"img{i}", 1, size=(w, h), seed=seed + i)
        for k in range(2):
            n = len(records[split])
            records[split].append({
                "id": f"{split}-{n}", "image": str(path.relative_to(directory)),
                "box": [2 + 20 * k, 4 + 3 * (i % 4), 24, 20],
                "clue": f"a {('red', 'green', 'blue')[i % 3]} thing number {i}.{k}",
                "inference": f"someone left object {i} in place {k}",
                "group": str(n // 4) if split == "val" else None,
            })
    return write_pairs(directory, records)


class NoPairs:
    """A dataset that loads but offers no training pairs."""

    def load(self, data_dir: Path, split: str) -> list[Any]:
        return []

    def check(self, data_dir: Path) -> list[str]:
        return []


class ToyMatch:
    """Each validation pair's image and region against the inferences of its group (from the
    whole split, so ``--limit`` keeps each group's candidates); the clue comes along as
    context, which a model may go without. It reads the ``toy-pairs`` dataset."""

    default_split = "val"
    dataset = "toy-pairs"
    limit_unit = "pairs"
    optional_inputs = frozenset({"context"})
    metric_info = {"accuracy": percent(chance=25.0), "n": COUNT}  # groups of four

    def plan(self, pairs: Sequence[GroundedText], run: RunInfo) -> list[Stage]:
        groups: dict[str | None, list[str]] = {}
        for pair in run.corpus:
            groups.setdefault(pair.group, []).append(pair.text)
        items = [Choice(p.id, p.visual, tuple(groups[p.group]), groups[p.group].index(p.text)) for p in pairs]
        return [Stage("match", Choose(items, per_unit=4))]

    def finish(self, pairs: Sequence[GroundedText], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = records["match"]
        return Evaluation({"accuracy": accuracy(answers), "n": len(answers)}, answers)


def make_no_pairs(spec: Spec, settings: Settings) -> NoPairs:
    return NoPairs()


def make_toy_match(spec: Spec, settings: Settings) -> ToyMatch:
    return ToyMatch()


class PairwiseClip:
    """clip:tiny behind the per-pair interface only (no encode_*, no score_matrix)."""

    accepts = frozenset({"image", "region"})

    def __init__(self, spec: Spec, settings: Settings) -> None:
        from abduct_clip._scorer import make_clip

        self.inner = make_clip(Spec("clip", "tiny"), settings, workers=0)

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> Any:
        return self.inner.score(visuals, texts)


class ClipTestPlugin:
    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("toy-pairs", "Tiny (image, region, clue, inference) pairs", "abduct_testing:make_pairs_file")
        yield Registration("toy-no-pairs", "A dataset without training pairs", "clip_helpers:make_no_pairs")

    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("toy-match", "Match each image region to its inference", "clip_helpers:make_toy_match")

    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("pairwise-clip", "clip:tiny scored pair by pair", "clip_helpers:PairwiseClip")


def install_test_plugin() -> Registry:
    """Make the test plugin part of the process-wide registry (``abduct.cli.main`` uses it)."""
    registry = build_registry([("clip-test", ClipTestPlugin())])
    reset_registry(registry)
    return registry


def clip_model(text: str, **settings: Any) -> Any:
    """The model a ``clip:...`` spec names, built by the registry as ``abduct eval`` builds it."""
    from abduct.host import get_registry

    return get_registry().create("model", text, Settings(**settings))
