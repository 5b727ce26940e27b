"""The ``visualriddles`` dataset component (abduct's Dataset protocol), read by the three tasks.

``--data DIR``: the Hugging Face repo as downloaded, or a hub cache holding it (``layout.py``);
one split, ``test``.
"""

from __future__ import annotations

from pathlib import Path

from abduct import Settings, Spec
from abduct_visualriddles.check import check_data
from abduct_visualriddles.layout import metadata_file
from abduct_visualriddles.records import Riddle, load_riddles


class VisualRiddlesDataset:
    def load(self, data_dir: Path, split: str) -> list[Riddle]:
        return load_riddles(Path(data_dir), split)

    def files(self, data_dir: Path, split: str) -> list[Path]:
        """What results.json hashes: ``test/metadata.csv`` (it changed often: the hash says which one)."""
        return [metadata_file(Path(data_dir), split)]

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir))


def make_dataset(spec: Spec, settings: Settings) -> VisualRiddlesDataset:
    """``visualriddles``."""
    return VisualRiddlesDataset()
