"""The ``cosim`` dataset component (abduct's Dataset and PairDataset protocols)."""

from __future__ import annotations

from pathlib import Path

from abduct import GroundedText, Settings, Spec
from abduct_cosim.check import check_data
from abduct_cosim.loader import load_split
from abduct_cosim.records import ContextMode, CosimRecord


class CosimDataset:
    def __init__(self, *, image_root: Path | None = None, context: ContextMode = "full") -> None:
        self.image_root = image_root
        self.context: ContextMode = context

    def load(self, data_dir: Path, split: str) -> list[CosimRecord]:
        return load_split(Path(data_dir), split, self.image_root)

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir), self.image_root)

    def pairs(self, data_dir: Path, split: str) -> list[GroundedText]:
        """One pair per record: the image with its context, the gold choice as text."""
        return [GroundedText(r.id, r.visual(self.context), r.choices[r.label]) for r in self.load(data_dir, split)]


def make_dataset(
    spec: Spec, settings: Settings, *, image_root: Path | None = None, context: ContextMode = "full"
) -> CosimDataset:
    """``cosim[,image_root=PATH][,context=full|question_change|none]``."""
    return CosimDataset(image_root=image_root, context=context)
