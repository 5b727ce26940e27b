"""The ``nleye`` dataset component (abduct's Dataset protocol), read by the three NL-EYE tasks.

``nleye[,image_root=PATH]``: the samples of ``DIR/test_set.csv`` with their images under
``image_root/<sample_id>/{premise,hypothesis1,hypothesis2}.png`` (default ``DIR/images``; a
folder that does not exist is one line when the split is loaded).
"""

from __future__ import annotations

from pathlib import Path

from abduct import Settings, Spec
from abduct_nleye.check import check_data
from abduct_nleye.loader import csv_file, image_folder, load_samples
from abduct_nleye.records import NleyeSample


class NleyeDataset:
    def __init__(self, *, image_root: Path | None = None) -> None:
        self.image_root = image_root

    def load(self, data_dir: Path, split: str) -> list[NleyeSample]:
        root = None if self.image_root is None else image_folder(self.image_root)
        return load_samples(Path(data_dir), split, root)

    def files(self, data_dir: Path, split: str) -> list[Path]:
        """What results.json hashes: ``test_set.csv``."""
        return [csv_file(Path(data_dir), split)]

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir), self.image_root)


def make_dataset(spec: Spec, settings: Settings, *, image_root: Path | None = None) -> NleyeDataset:
    """``nleye[,image_root=PATH]``."""
    return NleyeDataset(image_root=image_root)
