"""Reading and validating the released ``train.json`` / ``val.json``.

Layout (abduct's convention for the image folder)::

    DIR/train.json
    DIR/val.json
    DIR/images/<folder>/<img_fn>        e.g. DIR/images/genome_9/150297.jpg (Visual Genome)

``image_root`` moves the image folder. Every problem raises a ``DataError`` naming the file,
the record (its index, which is its id) and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.kit import read_json, require_dir
from abduct_cosim.records import CosimRecord

SPLITS = ("train", "val")
FIELDS = ("answer_choices", "answer_label", "answer_orig", "change", "question", "folder", "img_fn", "type")


def split_file(data_dir: Path, split: str) -> Path:
    if split not in SPLITS:
        raise AbductError(f"CoSIm has the splits {', '.join(SPLITS)} (the test split is not public), not '{split}'")
    return Path(data_dir) / f"{split}.json"


def default_image_root(data_dir: Path) -> Path:
    return Path(data_dir) / "images"


def image_folder(image_root: Path) -> Path:
    """A user-named image folder (``image_root=``), refused in one line when it is not a folder
    (a run would otherwise fail image by image, or not at all with a model that reads none)."""
    return require_dir(Path(image_root), "CoSIm image folder (image_root=)")


def _text(raw: dict[str, Any], name: str, file: Path, index: int, *, non_empty: bool = False) -> str:
    if name not in raw:
        raise DataError("missing", file=file, record=index, field=name)
    value = raw[name]
    if not isinstance(value, str):
        raise DataError(f"expected a string, got {type(value).__name__}", file=file, record=index, field=name)
    if non_empty and not value.strip():
        raise DataError("empty", file=file, record=index, field=name)
    return value


def parse_record(raw: Any, index: int, file: Path, image_root: Path) -> CosimRecord:
    """One validated record; raises DataError naming ``file``, ``index`` and the field."""
    if not isinstance(raw, dict):
        raise DataError(f"expected an object, got {type(raw).__name__}", file=file, record=index)
    if "answer_choices" not in raw:
        raise DataError("missing", file=file, record=index, field="answer_choices")
    choices = raw["answer_choices"]
    if not isinstance(choices, list) or len(choices) != 4:
        got = f"{len(choices)} items" if isinstance(choices, list) else type(choices).__name__
        raise DataError(f"expected a list of 4 strings, got {got}", file=file, record=index, field="answer_choices")
    for k, choice in enumerate(choices):
        if not isinstance(choice, str):
            raise DataError(f"expected a string, got {type(choice).__name__}", file=file, record=index,
                            field=f"answer_choices[{k}]")
    if "answer_label" not in raw:
        raise DataError("missing", file=file, record=index, field="answer_label")
    label = raw["answer_label"]
    if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label <= 3:
        raise DataError(f"expected an integer 0-3, got {label!r}", file=file, record=index, field="answer_label")
    folder = _text(raw, "folder", file, index, non_empty=True)
    img_fn = _text(raw, "img_fn", file, index, non_empty=True)
    for name, part in (("folder", folder), ("img_fn", img_fn)):
        if "/" in part or "\\" in part or part in (".", ".."):
            raise DataError(f"expected a plain name, got {part!r}", file=file, record=index, field=name)
    return CosimRecord(
        index=index, question=_text(raw, "question", file, index), answer_orig=_text(raw, "answer_orig", file, index),
        change=_text(raw, "change", file, index), choices=(choices[0], choices[1], choices[2], choices[3]),
        label=label, folder=folder, img_fn=img_fn, type=_text(raw, "type", file, index),
        image_path=str(Path(image_root) / folder / img_fn),
    )


def load_file(path: Path, image_root: Path | None = None) -> list[CosimRecord]:
    """Every record of ``path``, in file order (record i has id ``"i"``); the first problem
    raises. Images are not opened (``abduct cosim check`` does that)."""
    path = Path(path)
    data = read_json(path, "CoSIm file")
    if not isinstance(data, list):
        raise DataError(f"expected a JSON list of records, got {type(data).__name__}", file=path)
    root = default_image_root(path.parent) if image_root is None else Path(image_root)
    return [parse_record(raw, i, path, root) for i, raw in enumerate(data)]


def load_split(data_dir: Path, split: str, image_root: Path | None = None) -> list[CosimRecord]:
    return load_file(split_file(data_dir, split), image_root)
