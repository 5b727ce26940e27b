"""A content-addressed on-disk cache of embeddings.

Keys are hashes of (model fingerprint, input content); values are float vectors. Each
``put`` writes one new shard file atomically, so concurrent or killed runs never corrupt
the cache; shards are read once per process.
"""

from __future__ import annotations

import hashlib
import io
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from abduct.io import atomic_write_bytes


def default_cache_dir() -> Path:
    env = os.environ.get("ABDUCT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "abduct" / "embeddings"


class EmbeddingCache:
    """Embeddings for one model fingerprint, stored under ``root/<fingerprint hash>/``."""

    def __init__(self, root: Path, fingerprint: str) -> None:
        self.fingerprint = fingerprint
        self.directory = Path(root) / hashlib.sha256(fingerprint.encode()).hexdigest()[:24]
        self._table: dict[str, np.ndarray] | None = None

    def _load(self) -> dict[str, np.ndarray]:
        if self._table is None:
            table: dict[str, np.ndarray] = {}
            if self.directory.is_dir():
                for shard in sorted(self.directory.glob("shard-*.npz")):
                    try:
                        with np.load(shard) as data:
                            for key, vec in zip(data["keys"].tolist(), data["vectors"]):
                                table[key] = vec
                    except (OSError, ValueError, KeyError):
                        continue  # an unreadable shard only costs a recomputation
            self._table = table
        return self._table

    def get(self, keys: Sequence[str]) -> list[np.ndarray | None]:
        table = self._load()
        return [table.get(k) for k in keys]

    def put(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        if not len(keys):
            return
        table = self._load()
        buffer = io.BytesIO()
        np.savez(buffer, keys=np.array(list(keys)), vectors=np.asarray(vectors))
        atomic_write_bytes(self.directory / f"shard-{uuid.uuid4().hex}.npz", buffer.getvalue())
        for key, vec in zip(keys, vectors):
            table[key] = vec
