"""The ``sherlock`` dataset component (abduct's Dataset protocol)."""

from __future__ import annotations

from pathlib import Path

from abduct_sherlock.check import check_data
from abduct_sherlock.loader import load_instances
from abduct_sherlock.records import SherlockInstance


class SherlockDataset:
    def load(self, data_dir: Path, split: str) -> list[SherlockInstance]:
        return load_instances(Path(data_dir), split)

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir))
