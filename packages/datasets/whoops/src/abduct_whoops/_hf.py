"""The Hugging Face forms of WHOOPS!: a ``datasets`` folder written by ``save_to_disk`` (a
Dataset, or a DatasetDict whose ``test`` split is read) or parquet files (``DIR/*.parquet``,
``DIR/data/*.parquet``, read in name order). Needs ``pip install abduct-whoops[hf]``.

The ``image`` column holds the picture itself (``{"bytes", "path"}``): each one is written
once to the abduct cache as ``whoops-hf/<content digest>/images/<image_id>.png``, so models see
files, and a picture's path ends as it does in the CSV form (the random baseline's picks do
not depend on the form). Rows are named ``row N`` (0-based table index) in messages.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.kit import atomic_write_bytes, default_cache_dir, install_command
from abduct_whoops.records import COLUMNS, WhoopsImage
from abduct_whoops.rows import check_unique, parse_row, require_columns

SAVED_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")
EXTRA = "abduct-whoops[hf]"  # the hint: install_command(EXTRA), where abduct was installed from


def find(data_dir: Path) -> tuple[str, list[Path]] | None:
    """``("saved", [dir])`` or ``("parquet", files)`` when ``data_dir`` holds one; else None."""
    if any((data_dir / marker).is_file() for marker in SAVED_MARKERS):
        return "saved", [data_dir]
    files = sorted(data_dir.glob("*.parquet")) or sorted((data_dir / "data").glob("*.parquet"))
    return ("parquet", files) if files else None


def _rows_saved(folder: Path) -> list[dict[str, Any]]:
    try:
        import datasets  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise AbductError(f"{folder} is a datasets folder; reading it needs the datasets library: {install_command(EXTRA)}") from None
    loaded: Any = datasets.load_from_disk(str(folder))
    if isinstance(loaded, datasets.DatasetDict):
        if "test" not in loaded:
            raise DataError(f"no 'test' split (splits: {', '.join(loaded)})", file=folder)
        loaded = loaded["test"]
    if "image" in loaded.column_names:
        loaded = loaded.cast_column("image", datasets.Image(decode=False))
    return [dict(row) for row in loaded]


def _rows_parquet(files: list[Path]) -> list[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise AbductError(f"{files[0]} is parquet; reading it needs pyarrow: {install_command(EXTRA)}") from None
    rows: list[dict[str, Any]] = []
    for file in files:
        try:
            rows.extend(pq.read_table(file).to_pylist())
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise DataError(f"not a readable parquet file ({type(exc).__name__}: {exc})", file=file) from None
    return rows


def _image_file(value: Any, image_id: str, *, file: Path, where: str) -> str:
    """The picture of one row as a file (see the module docstring)."""
    if isinstance(value, dict):
        data, source = value.get("bytes"), value.get("path")
        if isinstance(data, bytes | bytearray) and data:
            digest = hashlib.sha256(data).hexdigest()[:16]
            target = default_cache_dir() / "whoops-hf" / digest / "images" / f"{image_id}.png"
            if not target.is_file():
                atomic_write_bytes(target, bytes(data))
            return str(target)
        if isinstance(source, str) and Path(source).is_file():
            return source
    raise DataError("no picture (expected {'bytes': ..., 'path': ...})", file=file,
                    record=f"{where} (image_id {image_id!r})", field="image")


def load(data_dir: Path, found: tuple[str, list[Path]], pictures: bool = True) -> tuple[list[Path], list[WhoopsImage]]:
    """The annotation files and the records; ``pictures=False`` (an answer key) writes no image."""
    kind, paths = found
    rows = _rows_saved(paths[0]) if kind == "saved" else _rows_parquet(paths)
    file = paths[0]
    if rows:
        require_columns(rows[0].keys(), COLUMNS, file)
    images = []
    for index, row in enumerate(rows):
        where = f"row {index}"
        image = parse_row(row, "", file=file, where=where)
        path = _image_file(row.get("image"), image.image_id, file=file, where=where) if pictures else ""
        from dataclasses import replace

        images.append(replace(image, path=path))
    check_unique(images, file)
    return hashed(paths), images


def hashed(paths: list[Path]) -> list[Path]:
    """The files of a found copy that results.json hashes: a saved folder's arrow files, or the
    parquet files."""
    return [p for folder in paths for p in (sorted(folder.glob("*.arrow")) if folder.is_dir() else [folder])]
