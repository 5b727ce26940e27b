"""Errors that the CLI reports as one line with exit code 2 (user errors), never a traceback."""

from __future__ import annotations

from pathlib import Path


class AbductError(Exception):
    """A problem the user can fix: bad input, an unknown name, a missing file."""


class DataError(AbductError):
    """Invalid content in an input file; names the file, the record and the field."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        record: object = None,
        field: str | None = None,
    ) -> None:
        self.file = None if file is None else str(file)
        self.record = record
        self.field = field
        self.reason = message
        where = []
        if file is not None:
            where.append(str(file))
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{': '.join([', '.join(where), message]) if where else message}")


class PluginError(AbductError):
    """A plugin returned something invalid or clashes with another plugin."""

