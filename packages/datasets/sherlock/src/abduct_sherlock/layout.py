"""Where Sherlock's files live in a data directory.

Layout (the released file names; the image folders are abduct's convention)::

    DIR/sherlock_train_v1_1.json                 (or sherlock_train_v1_0.json)
    DIR/sherlock_val_with_split_idxs_v1_1.json   (or ..._v1_0.json)
    DIR/sherlock_val_autoboxes.json              auto-box proposals (optional)
    DIR/images/vg/VG_100K/2341223.jpg            Visual Genome: last two URL parts
    DIR/images/vcr/movieclips_X/abc@3.jpg        VCR: last two URL parts
    DIR/val_retrieval/val_retrieval_{k}_{instances,instance_ids,answer_key}.json
    DIR/val_localization/val_localization_{instances,instance_ids,answer_key}.json
    DIR/val_comparison/val_comparison_{instances,instance_ids,answer_key}.json
    DIR/test_{task}_public/test_{task}[_{k}]_instances.json

The image roots can be moved with ``$ABDUCT_SHERLOCK_VG_ROOT`` / ``$ABDUCT_SHERLOCK_VCR_ROOT``
(e.g. to point at an existing VG_100K/VCR download) or with explicit arguments.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ANNOTATION_FILES = {
    "train": ("sherlock_train_v1_1.json", "sherlock_train_v1_0.json"),
    "val": ("sherlock_val_with_split_idxs_v1_1.json", "sherlock_val_with_split_idxs_v1_0.json"),
}
AUTOBOX_FILE = "sherlock_val_autoboxes.json"
TASKS = ("retrieval", "localization", "comparison")
VG_ENV = "ABDUCT_SHERLOCK_VG_ROOT"
VCR_ENV = "ABDUCT_SHERLOCK_VCR_ROOT"


def annotation_file(data_dir: Path, split: str) -> Path:
    """The annotation file of ``split`` in ``data_dir``: v1.1 if present, else v1.0."""
    from abduct import AbductError

    if split not in ANNOTATION_FILES:
        raise AbductError(f"unknown Sherlock split '{split}' (expected train or val)")
    names = ANNOTATION_FILES[split]
    for name in names:
        if (Path(data_dir) / name).is_file():
            return Path(data_dir) / name
    raise AbductError(f"{Path(data_dir) / names[0]} not found (nor {names[1]})")


@dataclass(frozen=True)
class ImageRoots:
    """Local folders holding the Visual Genome and VCR images."""

    vg: Path
    vcr: Path

    @classmethod
    def for_data_dir(cls, data_dir: Path, vg: Path | None = None, vcr: Path | None = None) -> ImageRoots:
        """Explicit roots, else the environment variables, else ``DIR/images/{vg,vcr}``."""
        data_dir = Path(data_dir)
        vg = vg or _env_path(VG_ENV) or data_dir / "images" / "vg"
        vcr = vcr or _env_path(VCR_ENV) or data_dir / "images" / "vcr"
        return cls(Path(vg), Path(vcr))

    def resolve(self, url: str) -> Path:
        """Local path of an image URL: ``VG_`` in the URL means Visual Genome, else VCR;
        both keep the URL's last two parts (folder/file)."""
        parts = [p for p in url.replace("\\", "/").split("/") if p]
        tail = parts[-2:]
        root = self.vg if "VG_" in url else self.vcr
        return root.joinpath(*tail)


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


def leaderboard_dir(data_dir: Path, split: str, task: str) -> Path:
    """``val_{task}`` for validation (public keys), ``test_{task}_public`` for test."""
    return Path(data_dir) / (f"val_{task}" if split == "val" else f"test_{task}_public")


def leaderboard_stem(split: str, task: str, chunk: int | None = None) -> str:
    return f"{split}_{task}" + ("" if chunk is None else f"_{chunk}")


def leaderboard_files(data_dir: Path, split: str, task: str, chunk: int | None = None) -> dict[str, Path]:
    """Paths of the instances, sorted instance ids and answer key of one leaderboard file set."""
    folder = leaderboard_dir(data_dir, split, task)
    stem = leaderboard_stem(split, task, chunk)
    return {
        "instances": folder / f"{stem}_instances.json",
        "instance_ids": folder / f"{stem}_instance_ids.json",
        "answer_key": folder / f"{stem}_answer_key.json",
    }
