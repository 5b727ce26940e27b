"""The ``nleye`` dataset component (abduct's Dataset protocol)."""

from __future__ import annotations

from pathlib import Path

from abduct import Settings, Spec
from abduct_nleye.check import check_data
from abduct_nleye.loader import load_samples
from abduct_nleye.records import NleyeSample


class NleyeDataset:
    def load(self, data_dir: Path, split: str) -> list[NleyeSample]:
        return load_samples(Path(data_dir), split)

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir))


def make_dataset(spec: Spec, settings: Settings) -> NleyeDataset:
    return NleyeDataset()
