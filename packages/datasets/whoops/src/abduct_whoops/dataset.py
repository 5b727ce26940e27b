"""The ``whoops`` dataset component (abduct's Dataset protocol)."""

from __future__ import annotations

from pathlib import Path

from abduct.spec import Settings, Spec
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

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir))


def make_dataset(spec: Spec, settings: Settings) -> WhoopsDataset:
    return WhoopsDataset()
