"""Helpers shared by the tests, made on the fly (no downloads, no Sherlock): small images with
regions, and a test plugin adding to the test kit's toy benchmark a dataset without pairs and
clip:tiny scored pair by pair, so training and evaluation run through the registry as they do
for users."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from abduct import Box, Region, Registration, Settings, Spec, VisualInput, hookimpl
from abduct.host import Registry
from abduct_testing import make_images
from abduct_testing.toy import install_toy_registry, write_toy_pairs

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


def write_pair_data(directory: Path) -> Path:
    """The toy pairs over landscape, portrait and square images (so widescreen views are
    trained too), validation pairs in retrieval groups of four."""
    return write_toy_pairs(directory, 12, 4, group=4, sizes=SIZES)


class NoPairs:
    """A dataset that loads but offers no training pairs."""

    def load(self, data_dir: Path, split: str) -> list[Any]:
        return []

    def check(self, data_dir: Path) -> list[str]:
        return []


def make_no_pairs(spec: Spec, settings: Settings) -> NoPairs:
    return NoPairs()


class PairwiseClip:
    """clip:tiny behind the per-pair interface only (no encode_*, no score_matrix)."""

    accepts = frozenset({"image", "region"})

    def __init__(self, spec: Spec, settings: Settings) -> None:
        from abduct_clip.factory import make_clip

        self.inner = make_clip(Spec("clip", "tiny"), settings, workers=0)

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> Any:
        return self.inner.score(visuals, texts)


class ClipTestPlugin:
    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("toy-no-pairs", "A dataset without training pairs", "clip_helpers:make_no_pairs")

    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("pairwise-clip", "clip:tiny scored pair by pair", "clip_helpers:PairwiseClip")


def install_test_plugin() -> Registry:
    """The toy benchmark and the test plugin in the process-wide registry (``abduct.cli.main`` uses it)."""
    return install_toy_registry(("clip-test", ClipTestPlugin()))


def clip_model(text: str, **settings: Any) -> Any:
    """The model a ``clip:...`` spec names, built by the registry as ``abduct eval`` builds it."""
    from abduct.host import get_registry

    return get_registry().create("model", text, Settings(**settings))
