"""What a cross-encoder sees of a visual input: region feature rows and their boxes.

The tokens of one input, in order:

1. the input's region, one token per box (Sherlock's clue region is a feature of its own, and
   it comes **first**);
2. the image's context boxes: those of a features file when one is given (its own feature
   rows, as the checkpoint was trained on), else the whole image and a ``grid`` x ``grid``
   grid of cells, extracted by the ``RoIExtractor``.

Extracted rows are cached on disk, one vector per (image content, box, extractor) in the
core's content-addressed ``EmbeddingCache``, so a second run (or a moved data directory)
decodes no image for boxes it has seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from abduct import AbductError, VisualInput
from abduct.kit import ContentKeys, EmbeddingCache, require_regular_image
from abduct_regions.extractor import RoIExtractor
from abduct_regions.feature_files import FeatureFile, image_id
from abduct_regions.positions import normalise_boxes

MEMO_SIZE = 4096


@dataclass(frozen=True)
class VisualTokens:
    """One input's feature rows ``[N, D]`` and boxes ``[N, 4]`` (0-1 ``x1, y1, x2, y2``)."""

    features: np.ndarray
    boxes: np.ndarray


# The largest value each size may take, from a settings file or an option: nothing in the
# weights bounds them, and a hostile 100000000 would allocate that image, pooled map or grid
# (the published models use 600, 7, 3 and 36-100 boxes).
SIZE_LIMITS = {"size": 4096, "pool": 64, "grid": 64, "max_boxes": 4096}


@dataclass(frozen=True)
class FeatureSettings:
    """How visual tokens are made (part of every model fingerprint that uses them)."""

    backbone: str = "resnet50"
    weights: str | None = None
    size: int = 600
    pool: int = 7
    grid: int = 3
    features: str | None = None  # a features file or directory (see feature_files)
    max_boxes: int = 36

    def describe(self) -> str:
        return (f"backbone={self.backbone}|weights={self.weights}|size={self.size}|pool={self.pool}|grid={self.grid}"
                f"|features={self.features}|max_boxes={self.max_boxes}")


def grid_boxes(width: float, height: float, grid: int) -> np.ndarray:
    """The whole image, then ``grid`` x ``grid`` cells row by row (pixels, ``x1, y1, x2, y2``)."""
    rows = [[0.0, 0.0, width, height]]
    for r in range(grid):
        for c in range(grid):
            rows.append([c * width / grid, r * height / grid, (c + 1) * width / grid, (r + 1) * height / grid])
    return np.array(rows, dtype=np.float32)


class RegionFeaturizer:
    """``tokens(visuals)``: the visual tokens of each input (see the module docstring)."""

    def __init__(self, settings: FeatureSettings, *, seed: int = 0, device: str = "cpu",
                 cache_dir: Path | None = None) -> None:
        self.settings = settings
        self.extractor = RoIExtractor(settings.backbone, weights=Path(settings.weights) if settings.weights else None,
                                      size=settings.size, pool=settings.pool, seed=seed, device=device)
        self.dim = self.extractor.dim
        self.file = FeatureFile(Path(settings.features), self.dim) if settings.features else None
        self.cache = EmbeddingCache(cache_dir, self.extractor.fingerprint) if cache_dir is not None else None
        self.keys = ContentKeys()
        self.fingerprint = f"{self.extractor.fingerprint}|{settings.describe()}"
        self.extracted = 0  # boxes run through the backbone (the rest came from the cache)
        self._memo: dict[VisualInput, VisualTokens] = {}  # recent inputs: a cross-encoder sees each many times

    def _image_size(self, media: str) -> tuple[int, int]:
        try:
            with Image.open(require_regular_image(media)) as image:
                return image.size
        except (OSError, ValueError) as exc:
            raise AbductError(f"{media}: cannot read the image ({type(exc).__name__}: {exc})") from None

    def _extract(self, media: str, boxes: np.ndarray) -> np.ndarray:
        """Rows of ``boxes`` of ``media``, from the cache where it has them."""
        keys = []
        if self.cache is not None:
            content = self.keys.file(media)
            keys = [f"{content}|{','.join(f'{v:.2f}' for v in box)}" for box in boxes]
            found = self.cache.get(keys)
        else:
            found = [None] * len(boxes)
        todo = [i for i, row in enumerate(found) if row is None]
        if todo:
            try:
                with Image.open(require_regular_image(media)) as image:
                    fresh = self.extractor.features(image, boxes[todo])
            except (OSError, ValueError) as exc:
                raise AbductError(f"{media}: cannot read the image ({type(exc).__name__}: {exc})") from None
            self.extracted += len(todo)
            if self.cache is not None:
                self.cache.put([keys[i] for i in todo], fresh)
            for i, row in zip(todo, fresh):
                found[i] = row
        return np.stack([np.asarray(r, dtype=np.float32) for r in found])

    def one(self, visual: VisualInput) -> VisualTokens:
        if visual.media is None or visual.kind != "image":
            raise AbductError("region features need an image input")
        width, height = self._image_size(visual.media)
        region = [[b.left, b.top, b.right, b.bottom] for b in visual.region.boxes] if visual.region else []
        region_boxes = np.array(region, dtype=np.float32).reshape(-1, 4)
        if self.file is not None:
            stored = self.file.get(image_id(visual.media))
            width = int(stored.width or width)
            height = int(stored.height or height)
            context_boxes, context_rows = stored.boxes, stored.features
            region_rows = self._extract(visual.media, region_boxes) if len(region_boxes) else context_rows[:0]
        else:
            context_boxes = grid_boxes(width, height, self.settings.grid)
            rows = self._extract(visual.media, np.concatenate([region_boxes, context_boxes]))
            region_rows, context_rows = rows[: len(region_boxes)], rows[len(region_boxes):]
        keep = max(0, self.settings.max_boxes - len(region_boxes))
        boxes = np.concatenate([region_boxes, context_boxes[:keep]])
        features = np.concatenate([region_rows, context_rows[:keep]])
        return VisualTokens(features.astype(np.float32), normalise_boxes(boxes, width, height))

    def tokens(self, visuals: Sequence[VisualInput]) -> list[VisualTokens]:
        """Each input's tokens; an input seen recently is not made again (a retrieval chunk
        scores each image against every text, batch after batch)."""
        out = []
        for visual in visuals:
            found = self._memo.get(visual)
            if found is None:
                if len(self._memo) >= MEMO_SIZE:
                    self._memo.pop(next(iter(self._memo)))
                found = self._memo[visual] = self.one(visual)
            out.append(found)
        return out
