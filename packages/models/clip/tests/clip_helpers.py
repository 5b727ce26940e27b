"""Helpers shared by the tests: small images with regions, made on the fly (no downloads)."""

from __future__ import annotations

from pathlib import Path

from abduct.records import Box, Region, VisualInput
from abduct.testing import make_images


def make_examples(directory: Path, count: int = 8, seed: int = 0) -> list[VisualInput]:
    """``count`` visual inputs over landscape, portrait and square images, each with a region."""
    sizes = [(96, 64), (64, 96), (80, 80)]
    visuals = []
    for i in range(count):
        w, h = sizes[i % len(sizes)]
        (path,) = make_images(directory / f"set{i}", 1, size=(w, h), seed=seed + i)
        box = Box(2 + 3 * (i % 5), 4 + 2 * (i % 3), 20 + i, 16)
        visuals.append(VisualInput(str(path), Region((box,))))
    return visuals
