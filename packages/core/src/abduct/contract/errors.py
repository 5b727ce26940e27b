"""Errors that the CLI reports as one line with exit code 2 (user errors), never a traceback."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
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


class UnknownNameError(AbductError):
    """A task, model, metric or dataset name that no installed plugin registers."""

    def __init__(self, kind: str, name: str, known: Iterable[str], package: str | None = None,
                 install: str | None = None) -> None:
        """``package``: the first-party distribution that provides ``name``, when it is not
        installed; ``install``: the command that installs it (``pip install {package}`` if not given)."""
        known = sorted(known)
        self.kind, self.name, self.known = kind, name, known
        if package is not None:  # a first-party component whose package is not installed
            super().__init__(f"{kind} '{name}' comes with {package}, which is not installed: "
                             f"{install or f'pip install {package}'}")
            return
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        listing = f" (known: {', '.join(known)})" if known and not close else ""
        if not known:
            listing = " (none installed; see `abduct plugins`)"
        super().__init__(f"unknown {kind} '{name}'{hint}{listing}")


class PluginError(AbductError):
    """A plugin returned something invalid or clashes with another plugin."""

