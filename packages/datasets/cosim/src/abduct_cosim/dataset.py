"""The ``cosim`` dataset component (abduct's Dataset and PairDataset protocols).

``cosim[,context=full|question_change|none][,image_root=PATH]``: the records of ``train.json``
or ``val.json`` with their images under ``image_root`` (default ``DIR/images``; a folder that
does not exist is one line when the split is loaded), each carrying the options the user gave
(``CosimRecord.context_mode``, ``CosimRecord.image_root``) so that the ``cosim`` task shows the
context asked for.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from abduct import GroundedText, Settings, Spec
from abduct_cosim.check import check_data
from abduct_cosim.loader import image_folder, load_split, split_file
from abduct_cosim.records import ContextMode, CosimRecord


class CosimDataset:
    """``context`` None: not given (the task's choice, else ``full``)."""

    def __init__(self, *, image_root: Path | None = None, context: ContextMode | None = None) -> None:
        self.image_root = image_root
        self.context: ContextMode | None = context

    def load(self, data_dir: Path, split: str) -> list[CosimRecord]:
        root = None if self.image_root is None else image_folder(self.image_root)
        records = load_split(Path(data_dir), split, root)
        if self.context is None and root is None:
            return records
        return [replace(r, context_mode=self.context, image_root=None if root is None else str(root)) for r in records]

    def files(self, data_dir: Path, split: str) -> list[Path]:
        """What results.json hashes: the split's annotation file."""
        return [split_file(Path(data_dir), split)]

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir), self.image_root)

    def pairs(self, data_dir: Path, split: str) -> list[GroundedText]:
        """One pair per record: the image with its context, the gold choice as text."""
        return [GroundedText(r.id, r.visual(), r.choices[r.label]) for r in self.load(data_dir, split)]


def make_dataset(
    spec: Spec, settings: Settings, *, image_root: Path | None = None, context: ContextMode = "full"
) -> CosimDataset:
    """``cosim[,image_root=PATH][,context=full|question_change|none]``."""
    return CosimDataset(image_root=image_root, context=context if "context" in spec.option_dict() else None)
