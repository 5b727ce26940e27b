"""The ``sherlock`` dataset component: abduct's Dataset and PairDataset protocols.

Other packages read Sherlock through the registry, never by importing this package::

    dataset = registry.create("dataset", "sherlock", settings)
    pairs = dataset.pairs(data_dir, "train")   # [GroundedText(id, visual, text, group)]
"""

from __future__ import annotations

from pathlib import Path

from abduct import GroundedText, Settings, Spec
from abduct_sherlock.check import check_data
from abduct_sherlock.loader import load_instances
from abduct_sherlock.records import SherlockInstance


class SherlockDataset:
    """The released annotation files of a data directory (``layout.py``).

    ``vg_root``/``vcr_root`` move the image folders (as ``$ABDUCT_SHERLOCK_VG_ROOT`` does);
    ``skip_invalid`` skips bad records (counted on stderr) instead of refusing the file."""

    def __init__(self, *, vg_root: Path | None = None, vcr_root: Path | None = None, skip_invalid: bool = False) -> None:
        self.vg_root = vg_root
        self.vcr_root = vcr_root
        self.skip_invalid = skip_invalid

    def load(self, data_dir: Path, split: str) -> list[SherlockInstance]:
        return load_instances(Path(data_dir), split, skip_invalid=self.skip_invalid, vg_root=self.vg_root,
                              vcr_root=self.vcr_root)

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir), self.vg_root, self.vcr_root)

    def pairs(self, data_dir: Path, split: str) -> list[GroundedText]:
        """One training pair per observation: the image with the clue's region and the clue as
        context, the inference as text; ``group`` is the retrieval chunk (validation only)."""
        return [
            GroundedText(inst.instance_id, inst.visual, inst.inference,
                         None if inst.split_idx is None else str(inst.split_idx))
            for inst in self.load(data_dir, split)
        ]


def make_dataset(
    spec: Spec, settings: Settings, *, vg_root: Path | None = None, vcr_root: Path | None = None,
    skip_invalid: bool = False,
) -> SherlockDataset:
    """``sherlock[,vg_root=PATH][,vcr_root=PATH][,skip_invalid=true]``."""
    return SherlockDataset(vg_root=vg_root, vcr_root=vcr_root, skip_invalid=skip_invalid)
