"""Reading a config's parquet rows (``pyarrow``) and the leaderboard's ``instances.json``.

Columns read (others, such as ``questions`` and ``n_tokens_label``, are ignored): ``instance_id``,
``image`` (``{"bytes", "path"}``), ``contest_number``, ``caption_choices`` (matching/ranking: the
captions; explanation: the caption), ``label`` (matching ``A``-``E``, ranking ``A``/``B``,
explanation the reference text), ranking's ``winner_source``, and the from-description configs'
``from_description``. A missing column is one line naming the columns found; a bad value names
the file, the row and the column. Each picture is written once to the abduct cache as
``nycc/<digest>.jpg`` (content-addressed), so models read files.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.kit import atomic_write_bytes, default_cache_dir, require_file
from abduct_nycc.records import LETTERS, NyccItem

BASE = ("instance_id", "image", "caption_choices", "label")


def read_rows(files: Iterable[Path]) -> list[tuple[Path, int, dict[str, Any]]]:
    """Every row of ``files`` with its file and index in that file."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]

    rows: list[tuple[Path, int, dict[str, Any]]] = []
    for file in files:
        try:
            table = pq.read_table(file)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise DataError(f"not a readable parquet file ({type(exc).__name__}: {exc})", file=file) from None
        rows.extend((file, i, row) for i, row in enumerate(table.to_pylist()))
    return rows


def required(task: str, configs: str) -> tuple[str, ...]:
    return (*BASE, *(("winner_source",) if task == "ranking" else ()),
            *(("from_description",) if configs == "description" else ()))


def image_file(value: Any, *, file: Path, where: str, pictures: bool = True) -> str:
    """The row's picture as a file in the cache (see the module docstring)."""
    if isinstance(value, dict):
        data = value.get("bytes")
        if isinstance(data, bytes | bytearray) and data:
            if not pictures:
                return ""
            target = default_cache_dir() / "nycc" / f"{hashlib.sha256(data).hexdigest()[:20]}.jpg"
            if not target.is_file():
                atomic_write_bytes(target, bytes(data))
            return str(target)
    raise DataError("no picture (expected {'bytes': ..., 'path': ...})", file=file, record=where, field="image")


def parse_rows(rows: list[tuple[Path, int, dict[str, Any]]], task: str, configs: str, fold: int,
               pictures: bool = True) -> list[NyccItem]:
    items = []
    if rows:
        found = list(rows[0][2])
        missing = [c for c in required(task, configs) if c not in found]
        if missing:
            raise DataError(f"no {', '.join(missing)} column for nycc-{task} ({configs} configs); columns found: "
                            f"{', '.join(found)}", file=rows[0][0])
    for file, index, row in rows:
        iid = row["instance_id"]
        where = f"row {index} (instance_id {iid!r})"
        if not isinstance(iid, str) or not iid:
            raise DataError(f"bad instance_id {iid!r}", file=file, record=f"row {index}", field="instance_id")
        choices, label = row["caption_choices"], row["label"]
        common: dict[str, Any] = {"instance_id": iid, "fold": fold, "file": str(file), "row": index,
                                  "image": image_file(row["image"], file=file, where=where, pictures=pictures),
                                  "contest_number": row.get("contest_number"),
                                  "description": row.get("from_description") if configs == "description" else None}
        if task == "explanation":
            if not isinstance(choices, str) or not isinstance(label, str) or not label.strip():
                raise DataError("expected the caption and a non-empty reference explanation (strings)", file=file,
                                record=where, field="caption_choices" if not isinstance(choices, str) else "label")
            items.append(NyccItem(caption=choices, explanation=label, **common))
            continue
        letters = LETTERS[task]
        if not isinstance(choices, list) or len(choices) != len(letters) or not all(isinstance(c, str) for c in choices):
            raise DataError(f"expected {len(letters)} captions", file=file, record=where, field="caption_choices")
        if not isinstance(label, str) or len(label) != 1 or label not in letters:
            raise DataError(f"expected one of {', '.join(letters)}, got {label!r}", file=file, record=where,
                            field="label")
        source = row.get("winner_source") if task == "ranking" else None
        if task == "ranking" and not isinstance(source, str):
            raise DataError(f"expected a string, got {source!r}", file=file, record=where, field="winner_source")
        items.append(NyccItem(choices=tuple(choices), label=letters.index(label), winner_source=source, **common))
    seen: set[str] = set()
    for item in items:
        if item.instance_id in seen:
            raise DataError("instance_id repeated", file=Path(item.file), record=f"row {item.row}",
                            field="instance_id")
        seen.add(item.instance_id)
    return items


def leaderboard_items(folder: Path, task: str) -> list[NyccItem]:
    """The public leaderboard set: ``instances.json`` (``[{"choices": {"A": ...}, "image", "instance_id"}]``)
    with its JPEGs beside it; no labels."""
    file = require_file(Path(folder) / "instances.json", f"NYCC {task} leaderboard instances")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"not JSON ({exc})", file=file) from None
    if not isinstance(data, list):
        raise DataError(f"expected a list of instances, got {type(data).__name__}", file=file)
    letters = LETTERS.get(task)
    if letters is None:
        raise AbductError(f"nycc-{task} has no leaderboard (only matching and ranking have one)")
    items = []
    for index, entry in enumerate(data):
        where = f"instance {index}"
        if not isinstance(entry, dict) or not all(k in entry for k in ("choices", "image", "instance_id")):
            raise DataError("expected {choices, image, instance_id}", file=file, record=where)
        choices = entry["choices"]
        if not isinstance(choices, dict) or sorted(choices) != list(letters):
            raise DataError(f"expected choices {', '.join(letters)}", file=file, record=where, field="choices")
        items.append(NyccItem(instance_id=str(entry["instance_id"]), fold=None, image=str(Path(folder) / entry["image"]),
                              choices=tuple(str(choices[k]) for k in letters), file=str(file), row=index))
    return items
