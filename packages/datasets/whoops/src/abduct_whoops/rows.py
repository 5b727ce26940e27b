"""One WHOOPS! row, whatever the release it comes from (the CSV, the image-folder metadata, a
Hugging Face copy), checked cell by cell: errors name the file, the row and the column."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import DataError
from abduct_whoops.records import LIST_COLUMNS, QA_COLUMN, STRING_COLUMNS, WhoopsImage


def parse_list(value: Any, *, file: Path, record: str, column: str) -> list[Any]:
    """A list from a real list or from a string holding a JSON (or Python literal) list."""
    if isinstance(value, list | tuple):
        return list(value)
    if hasattr(value, "tolist"):  # numpy arrays from pyarrow
        return list(value.tolist())
    if not isinstance(value, str):
        raise DataError(f"expected a list, got {type(value).__name__}", file=file, record=record, field=column)
    text = value.strip()
    try:
        parsed = json.loads(text)
    except RecursionError:
        raise DataError("a list nested too deeply", file=file, record=record, field=column) from None
    except json.JSONDecodeError as exc:
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise DataError(f"not a JSON list ({exc.msg} at column {exc.colno}): {_short(text)}", file=file,
                            record=record, field=column) from None
    if not isinstance(parsed, list):
        raise DataError(f"expected a list, got {type(parsed).__name__}: {_short(text)}", file=file, record=record,
                        field=column)
    return parsed


def _short(text: str, width: int = 60) -> str:
    return repr(text if len(text) <= width else text[:width] + "...")


def parse_row(row: Mapping[str, Any], path: str, *, file: Path, where: str) -> WhoopsImage:
    """One validated record from a row's raw values (``where`` names the row in messages)."""
    image_id = row.get("image_id")
    if not isinstance(image_id, str) or not image_id.strip() or any(c in image_id for c in "/\\") \
            or image_id.strip() in (".", ".."):
        raise DataError(f"bad image id {image_id!r}", file=file, record=where, field="image_id")
    record = f"{where} (image_id {image_id.strip()!r})"
    strings: dict[str, str] = {}
    for column in STRING_COLUMNS:
        value = row.get(column)
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise DataError(f"expected a string, got {type(value).__name__}", file=file, record=record, field=column)
        strings[column] = value.strip()
    lists: dict[str, tuple[str, ...]] = {}
    for column in LIST_COLUMNS:
        items = parse_list(row.get(column), file=file, record=record, column=column)
        for k, item in enumerate(items):
            if not isinstance(item, str) or not item.strip():
                raise DataError(f"item {k} is {item!r}, expected a non-empty string", file=file, record=record,
                                field=column)
        lists[column] = tuple(item.strip() for item in items)
    pairs: list[tuple[str, str]] = []
    for k, pair in enumerate(parse_list(row.get(QA_COLUMN), file=file, record=record, column=QA_COLUMN)):
        if hasattr(pair, "tolist"):  # numpy arrays from pyarrow
            pair = pair.tolist()
        if isinstance(pair, tuple):
            pair = list(pair)
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(x, str) and x.strip() for x in pair):
            raise DataError(f"pair {k} is {pair!r}, expected [question, answer] (two non-empty strings)", file=file,
                            record=record, field=QA_COLUMN)
        pairs.append((pair[0].strip(), pair[1].strip()))
    return WhoopsImage(
        image_id=strings["image_id"], path=path, designer_explanation=strings["designer_explanation"],
        selected_caption=strings["selected_caption"], commonsense_category=strings["commonsense_category"],
        image_designer=strings["image_designer"], crowd_captions=lists["crowd_captions"],
        crowd_explanations=lists["crowd_explanations"],
        crowd_underspecified_captions=lists["crowd_underspecified_captions"],
        question_answering_pairs=tuple(pairs), row=where,
    )


def require_columns(found: Iterable[str], needed: Sequence[str], file: Path) -> None:
    found = list(found)
    missing = [c for c in needed if c not in found]
    if missing:
        raise DataError(f"missing column(s) {', '.join(missing)}; columns found: {', '.join(found) or 'none'}",
                        file=file)


def check_unique(images: Sequence[WhoopsImage], file: Path) -> None:
    seen: dict[str, str] = {}
    for image in images:
        if image.image_id in seen:
            raise DataError(f"image id repeated (first at {seen[image.image_id]})", file=file,
                            record=f"{image.row} (image_id {image.image_id!r})", field="image_id")
        seen[image.image_id] = image.row
