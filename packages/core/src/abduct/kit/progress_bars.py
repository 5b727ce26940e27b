"""Progress on long work: a bar on a terminal, plain lines in logs, nothing with ``--quiet``.

When stderr is not a terminal (a batch job's log, a pipe), a bar's carriage returns and
escape codes would fill the log with garbage, nested bars worst of all. There a stage that
runs longer than ``PLAIN_SECONDS`` writes one plain line every ``PLAIN_SECONDS`` and one when
it ends; shorter stages write nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")
PLAIN_SECONDS = 30.0


def _terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def progress(
    iterable: Iterable[T], *, desc: str, total: int | None = None, quiet: bool = False, unit: str = "it"
) -> Iterator[T]:
    """Wrap ``iterable``: a bar on stderr when it is a terminal, plain lines otherwise, nothing
    when ``quiet``."""
    if quiet:
        yield from iterable
    elif not _terminal():
        yield from plain_progress(iterable, desc=desc, total=total, unit=unit)
    else:
        yield from tqdm(iterable, desc=desc, total=total, unit=unit, leave=False, dynamic_ncols=True)


def plain_progress(
    iterable: Iterable[T], *, desc: str, total: int | None = None, unit: str = "it",
    every: float | None = None,
) -> Iterator[T]:
    """``desc: 120/1000 units, 30 s`` on stderr every ``every`` seconds (``PLAIN_SECONDS``), and a last line when a
    stage that wrote any ends; no control characters."""
    every = PLAIN_SECONDS if every is None else every
    started = last = time.monotonic()
    done, wrote = 0, False
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    of = f"/{total}" if total is not None else ""
    for item in iterable:
        yield item
        done += 1
        now = time.monotonic()
        if now - last >= every:
            print(f"{desc}: {done}{of} {unit}s, {now - started:.0f} s", file=sys.stderr, flush=True)
            last, wrote = now, True
    if wrote:
        print(f"{desc}: done, {done} {unit}s in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
