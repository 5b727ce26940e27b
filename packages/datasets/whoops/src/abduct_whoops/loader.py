"""Reading the three released forms of WHOOPS!, all into ``WhoopsImage`` records.

1. ``DIR/whoops_dataset.csv`` (UTF-8, may start with a BOM; list columns as JSON strings)
   with the images in ``DIR/images/<image_id>.png`` (or ``DIR/whoops_images/``, the name of
   the released zip);
2. the image-folder layout: ``DIR/test/metadata.csv`` (or ``DIR/metadata.csv``) whose
   ``file_name`` column names each image beside it; the ``image`` column may be absent;
3. a Hugging Face ``datasets`` copy, saved with ``save_to_disk`` or as parquet files
   (``DIR/*.parquet``, ``DIR/data/*.parquet``), read with the optional extra
   ``pip install abduct-whoops[hf]`` (``_hf.py``).

List values may be real lists (parquet) or strings holding JSON (the CSVs); a string that is
not JSON but a Python literal list (single quotes) is read too. A bad value is a DataError
naming the file, the row (its line and image id) and the column; images are located, not
opened (``abduct whoops check`` opens them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from abduct import AbductError, DataError
from abduct.kit import read_csv_cells, require_dir
from abduct_whoops.records import COLUMNS, WhoopsImage
from abduct_whoops.rows import check_unique, parse_row, require_columns

CSV_NAME = "whoops_dataset.csv"
IMAGE_DIRS = ("images", "whoops_images")
METADATA = ("test/metadata.csv", "metadata.csv")


@dataclass(frozen=True)
class Release:
    """What ``load_release`` found: the form, the annotation file(s) and the images."""

    form: str  # "csv", "imagefolder" or "hf"
    files: tuple[Path, ...]
    images: tuple[WhoopsImage, ...]

    def by_id(self) -> dict[str, WhoopsImage]:
        return {image.image_id: image for image in self.images}


def read_csv_rows(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and ``(line, {column: text})`` of every non-blank row."""
    rows = read_csv_cells(path)
    header = [name.strip() for name in rows[0]]
    out = []
    line = 1
    for row in rows[1:]:
        line += 1
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise DataError(f"{len(row)} cells, the header has {len(header)}", file=path, record=f"line {line}")
        out.append((line, dict(zip(header, row))))
    return header, out


def image_dir(data_dir: Path) -> Path:
    """Where the CSV form keeps its images: the first of ``IMAGE_DIRS`` that exists."""
    return next((data_dir / name for name in IMAGE_DIRS if (data_dir / name).is_dir()), data_dir / IMAGE_DIRS[0])


def load_csv(path: Path, images: Path | None = None) -> list[WhoopsImage]:
    """``whoops_dataset.csv``: every row in file order, images at ``images/<image_id>.png``."""
    folder = images if images is not None else image_dir(path.parent)
    header, rows = read_csv_rows(path)
    require_columns(header, COLUMNS, path)
    out = [parse_row(row, "", file=path, where=f"line {line}") for line, row in rows]
    out = [_with_path(image, str(folder / f"{image.image_id}.png")) for image in out]
    check_unique(out, path)
    return out


def load_metadata(path: Path) -> list[WhoopsImage]:
    """The image-folder layout: ``metadata.csv`` with ``file_name`` relative to its folder."""
    header, rows = read_csv_rows(path)
    require_columns(header, ["file_name", *(c for c in COLUMNS if c != "image")], path)
    out = []
    for line, row in rows:
        name = row["file_name"].strip()
        where = f"line {line}"
        image = parse_row(row, "", file=path, where=where)
        if not name or Path(name).is_absolute() or ".." in Path(name).parts:
            raise DataError(f"bad file name {name!r}", file=path, record=f"{where} (image_id {image.image_id!r})",
                            field="file_name")
        out.append(_with_path(image, str(path.parent / name)))
    check_unique(out, path)
    return out


def _with_path(image: WhoopsImage, path: str) -> WhoopsImage:
    from dataclasses import replace

    return replace(image, path=path)


def _locate(data_dir: Path) -> tuple[str, list[Path]]:
    """The release's form and where it is (see the module docstring for the order tried)."""
    data_dir = require_dir(Path(data_dir), "WHOOPS! data directory")
    if (data_dir / CSV_NAME).is_file():
        return "csv", [data_dir / CSV_NAME]
    for name in METADATA:
        if (data_dir / name).is_file():
            return "imagefolder", [data_dir / name]
    from abduct_whoops import _hf

    found = _hf.find(data_dir)
    if found is not None:
        return found
    raise AbductError(f"no WHOOPS! release in {data_dir}: expected {CSV_NAME} (with images/), test/metadata.csv "
                      "(image folder), a datasets save_to_disk folder or parquet files")


def load_release(data_dir: Path) -> Release:
    """The release found in ``data_dir`` (see the module docstring for the order tried)."""
    form, paths = _locate(data_dir)
    if form == "csv":
        return Release("csv", (paths[0],), tuple(load_csv(paths[0])))
    if form == "imagefolder":
        return Release("imagefolder", (paths[0],), tuple(load_metadata(paths[0])))
    from abduct_whoops import _hf

    files, images = _hf.load(Path(data_dir), (form, paths))
    return Release("hf", tuple(files), tuple(images))


def release_files(data_dir: Path) -> list[Path]:
    """The annotation files of the release in ``data_dir`` (``Release.files``), found without
    reading them."""
    form, paths = _locate(data_dir)
    if form in ("csv", "imagefolder"):
        return paths
    from abduct_whoops import _hf

    return _hf.hashed(paths)


def load_answer_key(path: Path) -> list[WhoopsImage]:
    """The annotations an official-format scorer reads: a release directory, or one of its
    tables (``whoops_dataset.csv``, ``metadata.csv``, a parquet file); images need not exist."""
    path = Path(path)
    if path.is_dir():
        return list(load_release(path).images)
    if not path.is_file():
        raise AbductError(f"answer key not found: {path}")
    if path.suffix == ".parquet":
        from abduct_whoops import _hf

        return _hf.load(path.parent, ("parquet", [path]), pictures=False)[1]
    header, _ = read_csv_rows(path)
    return load_metadata(path) if "file_name" in header and "image" not in header else load_csv(path)
