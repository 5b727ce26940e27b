"""The ``whoops`` dataset component (abduct's Dataset protocol)."""

from __future__ import annotations

from pathlib import Path

from abduct import GroundedText, Settings, Spec, VisualInput
from abduct_whoops.check import check_data
from abduct_whoops.loader import load_release
from abduct_whoops.records import WhoopsImage
from abduct_whoops.splits import make_folds, parse_split


class WhoopsDataset:
    def load(self, data_dir: Path, split: str) -> list[WhoopsImage]:
        """The images of ``split`` (``all`` or ``fold<k>-<part>``), in release order."""
        images = list(load_release(Path(data_dir)).images)
        chosen = parse_split(split)
        if chosen is None:
            return images
        wanted = set(make_folds([image.image_id for image in images]).part(*chosen))
        return [image for image in images if image.image_id in wanted]

    def pairs(self, data_dir: Path, split: str) -> list[GroundedText]:
        """(image, caption) training pairs, one per crowd caption, for ``abduct train clip
        --dataset whoops``: ``train`` and ``val`` are fold 0's parts (the supervised protocol's
        first fold), ``fold<k>-<part>`` any fold's; the image id is the group."""
        named = {"train": "fold0-train", "val": "fold0-val", "test": "fold0-test"}.get(split, split)
        return [GroundedText(f"{image.image_id}#{k}", VisualInput(image.path), caption, image.image_id)
                for image in self.load(data_dir, named) for k, caption in enumerate(image.crowd_captions)]

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir))


def make_dataset(spec: Spec, settings: Settings) -> WhoopsDataset:
    return WhoopsDataset()
