"""A dataset repository in the Hugging Face hub cache, as ``huggingface_hub`` leaves it: the
folder ``datasets--OWNER--NAME`` holds ``snapshots/<commit>/`` (the files) and ``refs/main``
(the commit the ``main`` branch named when it was downloaded). Readers of a release use it where
``--data`` is the cache rather than a ``--local-dir`` copy; it reads files, never the network."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from abduct.contract.errors import AbductError


def hub_snapshot(repo_folder: Path, holds: Callable[[Path], bool] = Path.is_dir) -> Path | None:
    """The snapshot of ``repo_folder`` to read: the commit ``refs/main`` names, else the only
    snapshot that ``holds`` the release's files; None where there is none. Several candidates and
    no ``refs/main`` naming one is one line listing them (the user passes one as ``--data``)."""
    snapshots = repo_folder / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = repo_folder / "refs" / "main"
    if ref.is_file():
        named = snapshots / ref.read_text(encoding="utf-8").strip()
        if named.is_dir():
            return named
    found = sorted(p for p in snapshots.iterdir() if p.is_dir() and holds(p))
    if len(found) > 1:
        raise AbductError(f"{snapshots}: several snapshots ({', '.join(p.name for p in found)}) and no refs/main "
                          "naming one; pass the one to read as --data DIR")
    return found[0] if found else None
