"""Progress bars that stay quiet when asked to (``--quiet``) or when output is piped."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def progress(
    iterable: Iterable[T], *, desc: str, total: int | None = None, quiet: bool = False, unit: str = "it"
) -> Iterator[T]:
    """Wrap ``iterable`` in a bar on stderr unless ``quiet``."""
    if quiet:
        yield from iterable
        return
    yield from tqdm(iterable, desc=desc, total=total, unit=unit, leave=False, dynamic_ncols=True)
