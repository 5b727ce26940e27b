"""Content keys for the on-disk caches: what an input *is*, not where it lies.

A visual input's key hashes its media files' bytes (each file read once per process and
size/mtime) together with its region, spans, context and related inputs, so a moved or
copied data directory still hits the cache and an edited image misses it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from abduct.contract.records import VisualInput
from abduct.kit.io import sha256_file


class ContentKeys:
    def __init__(self) -> None:
        self._file_hashes: dict[tuple[str, int, int], str] = {}

    def file(self, path: str) -> str:
        try:
            st = os.stat(path)
        except OSError:
            return "missing:" + path  # the model raises a clear error when it reads it
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block the hash, a device never end it
            return "not-a-file:" + path
        key = (path, st.st_size, st.st_mtime_ns)
        if key not in self._file_hashes:
            self._file_hashes[key] = sha256_file(Path(path))
        return self._file_hashes[key]

    def _describe(self, visual: VisualInput) -> str:
        media = "" if visual.media is None else self.file(visual.media)
        # The identity string with the path swapped for the file's hash.
        rest = visual.without(frozenset({"related"})).key().partition("|")[2]
        related = "".join(f"\x01{self._describe(r)}\x02" for r in visual.related)
        return f"{visual.kind}:{media}|{rest}{related}"

    def visual(self, visual: VisualInput) -> str:
        return hashlib.sha256(("v\x00" + self._describe(visual)).encode()).hexdigest()

    @staticmethod
    def text(text: str) -> str:
        return hashlib.sha256(("t\x00" + text).encode()).hexdigest()


K = TypeVar("K", bound=Hashable)


def unique_index(items: Sequence[K]) -> tuple[list[K], np.ndarray]:
    """Unique items in first-seen order and, for each item, its position among them."""
    position: dict[K, int] = {}
    inverse = np.empty(len(items), dtype=np.int64)
    for i, item in enumerate(items):
        inverse[i] = position.setdefault(item, len(position))
    return list(position), inverse
