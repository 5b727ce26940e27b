"""Content-addressed on-disk caches: embeddings (vectors) and generations (texts).

Keys are hashes of input content (``abduct.kit.content``); each cache lives under
``root/<kind>/<hash of the model fingerprint>/``. Each ``put`` writes one new shard file
atomically, so concurrent or killed runs never corrupt a cache; shards are read once per
process, and an unreadable shard only costs a recomputation.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from abduct.kit.io import atomic_write_bytes

V = TypeVar("V")


def default_cache_dir() -> Path:
    if env := os.environ.get("ABDUCT_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "abduct"


class ShardCache(Generic[V]):
    kind = ""
    suffix = ""

    def __init__(self, root: Path, fingerprint: str) -> None:
        self.fingerprint = fingerprint
        self.root = Path(root)
        self.directory = self.root / self.kind / hashlib.sha256(fingerprint.encode()).hexdigest()[:24]
        self._table: dict[str, V] | None = None

    def _read(self, data: bytes) -> dict[str, V]:
        raise NotImplementedError

    def _write(self, keys: Sequence[str], values: Sequence[V] | np.ndarray) -> bytes:
        raise NotImplementedError

    def _load(self) -> dict[str, V]:
        if self._table is None:
            table: dict[str, V] = {}
            if self.directory.is_dir():
                for shard in sorted(self.directory.glob(f"shard-*{self.suffix}")):
                    try:
                        table.update(self._read(shard.read_bytes()))
                    except (OSError, ValueError, KeyError):
                        continue
            self._table = table
        return self._table

    def get(self, keys: Sequence[str]) -> list[V | None]:
        table = self._load()
        return [table.get(k) for k in keys]

    def put(self, keys: Sequence[str], values: Sequence[V] | np.ndarray) -> None:
        if not len(keys):
            return
        table = self._load()
        atomic_write_bytes(self.directory / f"shard-{uuid.uuid4().hex}{self.suffix}", self._write(keys, values))
        table.update(zip(keys, values))


class EmbeddingCache(ShardCache[np.ndarray]):
    kind, suffix = "embeddings", ".npz"

    def _read(self, data: bytes) -> dict[str, np.ndarray]:
        with np.load(io.BytesIO(data)) as arrays:
            return dict(zip(arrays["keys"].tolist(), arrays["vectors"]))

    def _write(self, keys: Sequence[str], values: Sequence[np.ndarray] | np.ndarray) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, keys=np.array(list(keys)), vectors=np.asarray(values))
        return buffer.getvalue()


class TextCache(ShardCache[str]):
    kind, suffix = "generations", ".json"

    def _read(self, data: bytes) -> dict[str, str]:
        table: Any = json.loads(data)
        if not isinstance(table, dict):
            raise ValueError("not a JSON object")
        return {str(k): str(v) for k, v in table.items()}

    def _write(self, keys: Sequence[str], values: Sequence[str] | np.ndarray) -> bytes:
        return json.dumps(dict(zip(keys, values))).encode()
