"""The ``var`` dataset component (abduct's Dataset protocol)."""

from __future__ import annotations

from pathlib import Path

from abduct import Settings, Spec
from abduct_var.check import check_data
from abduct_var.loader import load_split
from abduct_var.records import VarExample


class VarDataset:
    def load(self, data_dir: Path, split: str) -> list[VarExample]:
        return load_split(Path(data_dir), split)[0]

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir))


def make_dataset(spec: Spec, settings: Settings) -> VarDataset:
    return VarDataset()
