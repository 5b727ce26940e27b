"""Reading one question file: JSON Lines (the release) or a JSON list (the organisers' own copy of
the test questions), each record an object, with the place it came from for error lines.

Errors are ``DataError`` naming the file, the record (``line N`` in JSON Lines, ``item N`` in a
list, counting from 1) and the field. Blank lines are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abduct import DataError
from abduct.kit import read_json


@dataclass(frozen=True)
class Raw:
    """One record as read: its fields and where it is (``line 3``, ``item 3``)."""

    file: Path
    place: str
    fields: Mapping[str, Any]

    def error(self, message: str, field: str | None = None) -> DataError:
        return DataError(message, file=self.file, record=self.place, field=field)

    def require(self, name: str) -> Any:
        if name not in self.fields:
            raise self.error(f"missing (fields found: {', '.join(sorted(self.fields)) or 'none'})", name)
        return self.fields[name]

    def text(self, name: str, *, empty: bool = False) -> str:
        value = self.require(name)
        if not isinstance(value, str) or (not empty and not value.strip()):
            raise self.error(f"expected a {'' if empty else 'non-empty '}string, got {value!r}", name)
        return value


def _lines(path: Path) -> Iterator[Raw]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    except OSError as exc:
        raise DataError(f"cannot be read ({exc.strerror or type(exc).__name__})", file=path) from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise DataError(f"not valid JSON ({exc})", file=path, record=f"line {number}") from None
        if not isinstance(value, dict):
            raise DataError(f"expected a JSON object, got {type(value).__name__}", file=path, record=f"line {number}")
        yield Raw(path, f"line {number}", value)


def _items(path: Path) -> Iterator[Raw]:
    data = read_json(path, "BlackSwan question file")
    if not isinstance(data, list):
        raise DataError(f"expected a JSON list of questions (or JSON Lines), got {type(data).__name__}", file=path)
    for number, value in enumerate(data, 1):
        if not isinstance(value, dict):
            raise DataError(f"expected a JSON object, got {type(value).__name__}", file=path, record=f"item {number}")
        yield Raw(path, f"item {number}", value)


def read_records(path: Path) -> list[Raw]:
    """Every record of ``path``, in order: JSON Lines unless the file holds one JSON list."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        return list(_items(path))
    return list(_lines(path))
