"""Damaged cache files, as a user's disk leaves them: the tests of every cache (embeddings,
generations, region features, served responses, frames, thumbnails, strips) damage a kept file
with ``damage(path, kind)`` and check that it is said once and computed again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

# the kinds every cache file can suffer; NaN and another format depend on the file's content
KINDS = ("truncated", "flipped", "empty", "directory")


def damage(path: Path, kind: str) -> None:
    """Damage the file ``path`` in place as ``kind`` (one of ``KINDS``) says: cut to half its
    size, 16 bytes flipped a third of the way in, emptied, or replaced by a directory."""
    if kind == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif kind == "flipped":
        data = bytearray(path.read_bytes())
        for i in range(len(data) // 3, min(len(data), len(data) // 3 + 16)):
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "directory":
        path.unlink()
        path.mkdir()
        (path / "inside").write_bytes(b"x")
    else:
        raise ValueError(f"unknown damage '{kind}'; one of {', '.join(KINDS)}")


def rewrite_npz(path: Path, **arrays: Any) -> None:
    """``path`` (an ``.npz``) written again, whole, with ``arrays`` in place of its own: a valid
    file whose content is wrong (a NaN, another shape or dtype)."""
    with np.load(path) as stored:
        kept = {name: stored[name] for name in stored.files}
    path.unlink()
    with path.open("wb") as f:
        np.savez(f, **{**kept, **arrays})
