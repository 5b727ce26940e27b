"""The authors' separate identification release: WHOOPS! images beside normal counterparts.

A CSV (the first found of ``IDENTIFICATION_FILES``) with columns ``strange_image`` (the weird
picture), ``normal_image`` (its normal counterpart) and ``natural_image`` (a natural
picture), each a file name relative to the CSV's folder (or its ``images/`` subfolder;
``.png`` is added to a name without a suffix). ``counterpart=natural`` pairs the weird picture
with ``natural_image`` instead of ``normal_image``. A weird picture whose file stem is a WHOOPS!
image id takes that image's category and fold.

Found in ``normal_images=DIR`` when given (``--dataset whoops-identification,normal_images=DIR``;
DIR, or the CSV itself), else in ``DATA/identification/`` or ``DATA`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from abduct import AbductError, DataError
from abduct_whoops.loader import read_csv_rows
from abduct_whoops.rows import require_columns

IDENTIFICATION_FILES = ("annotated_normal_natural_stranged.csv", "wmtis_identify_annotated.csv", "identification.csv")
Counterpart = Literal["normal", "natural"]


@dataclass(frozen=True)
class Pair:
    """A weird picture and its normal counterpart; ``image_id`` the weird picture's file stem."""

    pair_id: str
    weird: str
    normal: str
    image_id: str


def find_file(data_dir: Path, given: Path | None) -> Path | None:
    """The identification CSV (see the module docstring); None when there is none."""
    if given is not None:
        given = Path(given)
        if given.is_file():
            return given
        if not given.is_dir():
            raise AbductError(f"normal_images: not found: {given}")
        places = [given]
    else:
        places = [data_dir / "identification", data_dir]
    for place in places:
        for name in IDENTIFICATION_FILES:
            if (place / name).is_file():
                return place / name
    if given is not None:
        raise AbductError(f"normal_images: no identification file in {given} (expected one of "
                          f"{', '.join(IDENTIFICATION_FILES)})")
    return None


def _locate(folder: Path, name: str) -> str:
    if not Path(name).suffix:
        name += ".png"
    for candidate in (folder / name, folder / "images" / name):
        if candidate.is_file():
            return str(candidate)
    return str(folder / name)


def load_pairs(path: Path, counterpart: Counterpart = "normal") -> list[Pair]:
    header, rows = read_csv_rows(path)
    column = f"{counterpart}_image"
    require_columns(header, ["strange_image", column], path)
    pairs, seen = [], set()
    for line, row in rows:
        names = {"strange_image": row["strange_image"].strip(), column: row[column].strip()}
        for field, name in names.items():
            if not name or Path(name).is_absolute() or ".." in Path(name).parts:
                raise DataError(f"bad file name {name!r}", file=path, record=f"line {line}", field=field)
        stem = Path(names["strange_image"]).stem
        if stem in seen:
            raise DataError("weird picture repeated", file=path, record=f"line {line} (image {stem!r})",
                            field="strange_image")
        seen.add(stem)
        pairs.append(Pair(stem, _locate(path.parent, names["strange_image"]), _locate(path.parent, names[column]), stem))
    return pairs
