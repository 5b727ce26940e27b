"""Reading ``test_set.csv`` and locating ``images/<sample_id>/{premise,hypothesis1,hypothesis2}.png``
(``image_root`` moves the ``images`` folder).

Only ``sample_id``, ``reasoning_category``, ``domain``, ``time_direction`` and
``time_duration`` are confirmed column names of the release; for the others the first
present of these names is used (matched case-insensitively, spaces as underscores):

- gold: ``label``, ``gold_label``, ``gold_hypothesis``, ``gold``, ``answer`` — ``1``/``2`` or
  ``hypothesis1``/``hypothesis2`` (also ``hypothesis 1``, ``h1``); never assumed;
- descriptions (needed by ``setup=text`` only): ``premise``, ``premise_description``,
  ``premise_desc``, ``premise_text``, ``premise_caption``, and the same for ``hypothesis1``/
  ``hypothesis_1`` and ``hypothesis2``/``hypothesis_2``;
- explanation (optional): ``explanation``, ``gold_explanation``.

Unknown columns (the release's image URLs) are ignored. A missing required column is a
DataError listing the columns found; a bad value names the file, the row (its line and
sample id) and the column. The file may start with a UTF-8 BOM.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from abduct import AbductError, DataError
from abduct.kit import read_csv_cells, require_dir, require_file
from abduct_nleye.records import CATEGORY_FIELDS, NleyeSample

CSV_NAME = "test_set.csv"
GOLD = ("label", "gold_label", "gold_hypothesis", "gold", "answer")
EXPLANATION = ("explanation", "gold_explanation")
_SUFFIXES = ("", "_description", "_desc", "_text", "_caption")
PREMISE = tuple(f"premise{s}" for s in _SUFFIXES)
HYPOTHESES = (tuple(f"{base}{s}" for base in ("hypothesis1", "hypothesis_1") for s in _SUFFIXES),
              tuple(f"{base}{s}" for base in ("hypothesis2", "hypothesis_2") for s in _SUFFIXES))


def _norm(name: str) -> str:
    return re.sub(r"\s+", "_", name.strip().lower())


def parse_gold(value: str) -> int | None:
    """1 or 2 from ``1``, ``2``, ``1.0``, ``hypothesis1``, ``Hypothesis 2``, ``h1``...; None otherwise."""
    text = re.sub(r"[\s_\-]", "", value.strip().lower())
    match = re.fullmatch(r"(?:hypothesis|hyp|h)?([12])(?:\.0)?", text)
    return int(match.group(1)) if match else None


class Columns:
    """Which header column holds each field."""

    def __init__(self, header: list[str], file: Path) -> None:
        self.found = header
        self.index: dict[str, int] = {}
        for i, name in enumerate(header):
            self.index.setdefault(_norm(name), i)
        self.file = file

    def pick(self, names: tuple[str, ...]) -> int | None:
        return next((self.index[n] for n in names if n in self.index), None)

    def need(self, names: tuple[str, ...], what: str) -> int:
        found = self.pick(names)
        if found is None:
            raise DataError(f"no {what} column (accepted: {', '.join(names)}); columns found: "
                            f"{', '.join(self.found) or 'none'}", file=self.file)
        return found


def load_csv(path: Path, data_dir: Path | None = None, image_root: Path | None = None) -> list[NleyeSample]:
    """Every row of ``path``, in file order; images are looked for under ``image_root``
    (default ``data_dir/images``, ``data_dir`` defaulting to the CSV's folder) but not opened
    (``abduct nleye check`` does that)."""
    path = require_file(Path(path), "NL-EYE csv")
    images_root = Path(image_root) if image_root is not None else (
        Path(data_dir) if data_dir is not None else path.parent) / "images"
    rows = read_csv_cells(path)
    cols = Columns(rows[0], path)
    sid = cols.need(("sample_id",), "sample_id")
    gold = cols.need(GOLD, "gold label")
    cats = {name: cols.need((name,), name) for name in CATEGORY_FIELDS}
    premise, h1, h2 = cols.pick(PREMISE), cols.pick(HYPOTHESES[0]), cols.pick(HYPOTHESES[1])
    described = None not in (premise, h1, h2)
    explanation = cols.pick(EXPLANATION)
    samples: list[NleyeSample] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(cols.found):
            raise DataError(f"{len(row)} cells, the header has {len(cols.found)}", file=path, record=f"line {line}")
        sample_id = row[sid].strip()
        where = f"line {line} (sample_id {sample_id!r})"
        if not sample_id or "/" in sample_id or "\\" in sample_id or sample_id in (".", ".."):
            raise DataError(f"bad sample id {sample_id!r}", file=path, record=f"line {line}", field=cols.found[sid])
        if sample_id in seen:
            raise DataError(f"sample id repeated (first at line {seen[sample_id]})", file=path, record=where,
                            field=cols.found[sid])
        seen[sample_id] = line
        label = parse_gold(row[gold])
        if label is None:
            raise DataError(f"expected 1/2 or hypothesis1/hypothesis2, got {row[gold]!r}", file=path, record=where,
                            field=cols.found[gold])
        images = images_root / sample_id
        samples.append(NleyeSample(
            sample_id=sample_id, gold=label, premise_image=str(images / "premise.png"),
            hypothesis_images=(str(images / "hypothesis1.png"), str(images / "hypothesis2.png")),
            categories={name: row[i].strip() for name, i in cats.items()},
            premise_text=row[premise] if premise is not None else None,
            hypothesis_texts=(row[h1], row[h2]) if described and h1 is not None and h2 is not None else None,
            explanation=row[explanation] if explanation is not None else None, row=line, file=str(path),
        ))
    return samples


def csv_file(data_dir: Path, split: str = "test") -> Path:
    """The split's annotation file: ``DIR/test_set.csv`` (NL-EYE has one split)."""
    if split != "test":
        raise AbductError(f"NL-EYE has one split, 'test' ({CSV_NAME}), not '{split}'")
    return Path(data_dir) / CSV_NAME


def image_folder(image_root: Path) -> Path:
    """A user-named image folder (``image_root=``), refused in one line when it is not a folder."""
    return require_dir(Path(image_root), "NL-EYE image folder (image_root=)")


def load_samples(data_dir: Path, split: str = "test", image_root: Path | None = None) -> list[NleyeSample]:
    """The split's samples, their images under ``image_root`` (default ``DIR/images``)."""
    return load_csv(csv_file(data_dir, split), data_dir, image_root)


def require_descriptions(samples: list[NleyeSample], file: Path) -> None:
    """``setup=text`` reads the gold descriptions: refuse a file without them."""
    if samples and samples[0].hypothesis_texts is None:
        with open(file, encoding="utf-8-sig", newline="") as handle:
            header = next(csv.reader(handle), [])
        raise DataError("setup=text needs the premise and hypothesis description columns (accepted: "
                        f"{', '.join(PREMISE)}; {', '.join(HYPOTHESES[0])}; {', '.join(HYPOTHESES[1])}); "
                        f"columns found: {', '.join(header)}", file=file)


def require_explanations(samples: list[NleyeSample], file: Path) -> None:
    """``nleye-explanation`` reads the gold explanation: refuse a file without the column
    (listing the columns found) or a row whose explanation is empty (naming row and column)."""
    with open(file, encoding="utf-8-sig", newline="") as handle:
        header = next(csv.reader(handle), [])
    column = Columns(header, file).pick(EXPLANATION)
    if column is None:
        raise DataError(f"nleye-explanation needs the gold explanation column (accepted: {', '.join(EXPLANATION)}); "
                        f"columns found: {', '.join(header) or 'none'}", file=file)
    for s in samples:
        if s.explanation is None or not s.explanation.strip():
            raise DataError("empty gold explanation", file=file, record=f"line {s.row} (sample_id {s.sample_id!r})",
                            field=header[column])
