"""Content-addressed on-disk caches: embeddings (vectors) and generations (texts).

Keys are hashes of input content (``abduct.kit.content``); each cache lives under
``root/<kind>/<hash of the model fingerprint>/``. Each ``put`` writes one new shard file
atomically, so concurrent or killed runs never corrupt a cache; shards are read once per
process. What a shard holds is checked as it is read (the container, every value's type,
shape, dtype and finiteness): a damaged shard (cut short, bytes flipped, emptied, another
format, a directory in its place) is one ``CacheWarning`` naming it, it is removed, and its
entries are computed again, so a run's numbers equal a clean run's.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import uuid
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from abduct.kit.io import atomic_write_bytes
from abduct.kit.reasoning import ServedReply

V = TypeVar("V")


class CacheWarning(UserWarning):
    """A damaged cache file: said once, then its entries are computed again."""


def cache_damaged(path: Path | str, what: str, *, remove: bool = True) -> None:
    """Say in one warning that the cache file ``path`` is damaged
    (``what``) and will be computed again; with ``remove``, take it out of the cache (best effort:
    a file, or a directory where a file belongs), so that the next run does not trip on it."""
    name = os.fspath(path)
    warnings.warn(f"cache file {name} {what}; its entries are computed again", CacheWarning, stacklevel=2)
    if remove:
        try:
            if os.path.isdir(name) and not os.path.islink(name):
                shutil.rmtree(name)
            else:
                os.unlink(name)
        except OSError:
            pass


def read_cache_file(path: Path) -> bytes | None:
    """``path``'s bytes, or None (said by ``cache_damaged``) when it is a directory, empty or
    unreadable; None without a word when it is gone (another process removed it)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        cache_damaged(path, "is a directory")
        return None
    except OSError as exc:
        cache_damaged(path, f"cannot be read ({exc.strerror or exc})", remove=False)
        return None
    if not data:
        cache_damaged(path, "is empty")
        return None
    return data


def read_npz(data: bytes) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file's bytes, each member checked against its CRC; raises
    ``ValueError`` saying what is wrong with bytes that are not a whole ``.npz`` (no pickles read)."""
    if not data.startswith(b"PK\x03\x04"):
        raise ValueError("is not an .npz file (garbled, or another format)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            return {name: arrays[name] for name in arrays.files}
    except Exception as exc:  # noqa: BLE001 - zipfile, zlib and numpy each raise their own
        raise ValueError(f"is not a whole .npz file ({type(exc).__name__}: {exc})") from None


def whole_jpeg(cached: Path) -> bool:
    """Whether a cache holds a whole JPEG at ``cached`` (a thumbnail, a frame strip): one from its
    first marker to its last that decodes (small pictures: cheap). A damaged one (cut short,
    emptied, garbled, another format, a directory in its place) is said by ``cache_damaged`` and
    removed, to be made again; a missing one is just not there."""
    from PIL import Image  # only the pages' pictures need it: not at every command's start

    data = read_cache_file(cached)
    if data is None:
        return False
    if not (data.startswith(b"\xff\xd8") and data.endswith(b"\xff\xd9")):
        cache_damaged(cached, "is not a whole JPEG (cut short, or another format)")
        return False
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        cache_damaged(cached, f"does not decode as a JPEG ({exc})")
        return False
    return True


# The run's choice of caches (--cache-dir, --no-cache), read by the caches plugins keep themselves
# (served responses, region features): set by ``abduct eval`` around a run, unset otherwise.
_RUN_CACHE: ContextVar[tuple[Path | None, bool] | None] = ContextVar("abduct_run_cache", default=None)


@contextmanager
def run_caches(directory: Path | None, use: bool) -> Iterator[None]:
    """Within: ``default_cache_dir()`` is ``directory`` when given, and ``cache_dir_for`` gives
    None unless ``use`` (what ``--cache-dir`` and ``--no-cache`` say for every cache)."""
    token = _RUN_CACHE.set((directory, use))
    try:
        yield
    finally:
        _RUN_CACHE.reset(token)


def cache_dir_for(kind: str) -> Path | None:
    """Where a plugin keeps a cache of its own (``kind``: its folder under abduct's cache), or None
    when the run keeps no cache (``--no-cache``); under ``--cache-dir`` when one is given."""
    chosen = _RUN_CACHE.get()
    return None if chosen is not None and not chosen[1] else default_cache_dir() / kind


def default_cache_dir() -> Path:
    chosen = _RUN_CACHE.get()
    if chosen is not None and chosen[0] is not None:  # the run's --cache-dir
        return chosen[0]
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
        self._files: list[Path] = []  # the shards the table was read from

    def _read(self, data: bytes) -> dict[str, V]:
        """A shard's entries; raises ``ValueError`` saying what is wrong with a damaged one."""
        raise NotImplementedError

    def _write(self, keys: Sequence[str], values: Sequence[V] | np.ndarray) -> bytes:
        raise NotImplementedError

    def _agree(self, shards: dict[Path, dict[str, V]]) -> dict[Path, dict[str, V]]:
        """The shards whose entries agree with one another (all of them, unless a kind says)."""
        return shards

    def _load(self) -> dict[str, V]:
        if self._table is None:
            shards: dict[Path, dict[str, V]] = {}
            if self.directory.is_dir():
                for shard in sorted(self.directory.glob(f"shard-*{self.suffix}")):
                    data = read_cache_file(shard)
                    if data is None:
                        continue
                    try:
                        shards[shard] = self._read(data)
                    except Exception as exc:  # noqa: BLE001 - whatever a damaged file raises, it is recomputed
                        cache_damaged(shard, _damage(exc))
            table: dict[str, V] = {}
            agreed = self._agree(shards)
            for entries in agreed.values():
                table.update(entries)
            self._files = list(agreed)
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


def _damage(exc: BaseException) -> str:
    """What a shard's read raised, as the warning says it."""
    if isinstance(exc, ValueError) and type(exc) is ValueError and str(exc):
        return str(exc)
    return f"is damaged ({type(exc).__name__}: {exc})" if str(exc) else f"is damaged ({type(exc).__name__})"


class EmbeddingCache(ShardCache[np.ndarray]):
    """Vectors: a shard is an ``.npz`` of ``keys`` (strings) and ``vectors`` (one finite float row
    per key); every shard's rows have one length (a shard whose rows differ from the others' is
    damaged)."""

    kind, suffix = "embeddings", ".npz"

    def _read(self, data: bytes) -> dict[str, np.ndarray]:
        arrays = read_npz(data)
        if {"keys", "vectors"} - set(arrays):
            raise ValueError("holds no keys and vectors")
        keys, vectors = arrays["keys"], arrays["vectors"]
        if keys.ndim != 1 or keys.dtype.kind != "U":
            raise ValueError(f"holds keys of shape {keys.shape} and dtype {keys.dtype}, not a list of strings")
        if vectors.ndim != 2 or vectors.dtype.kind != "f" or len(vectors) != len(keys) or not vectors.shape[1]:
            raise ValueError(f"holds vectors of shape {vectors.shape} and dtype {vectors.dtype} "
                             f"for {len(keys)} keys, not one float vector per key")
        if not np.isfinite(vectors).all():
            raise ValueError("holds a vector that is not finite (NaN or infinite)")
        return dict(zip(keys.tolist(), vectors))

    def _agree(self, shards: dict[Path, dict[str, np.ndarray]]) -> dict[Path, dict[str, np.ndarray]]:
        sizes = {path: next(iter(entries.values())).shape[0] for path, entries in shards.items() if entries}
        if len(set(sizes.values())) < 2:
            return shards
        common = Counter(sizes.values()).most_common(1)[0][0]
        for path, size in sizes.items():
            if size != common:
                cache_damaged(path, f"holds vectors of {size} values where the cache's others have {common}")
        return {path: entries for path, entries in shards.items() if sizes.get(path, common) == common}

    def put(self, keys: Sequence[str], values: Sequence[np.ndarray] | np.ndarray) -> None:
        # fresh vectors of another length than the cached ones: the cached ones are the odd ones
        fresh = np.asarray(values)
        table = self._load()
        if len(keys) and fresh.ndim == 2 and table:
            held = next(iter(table.values())).shape[0]
            if held != fresh.shape[1]:
                cache_damaged(self.directory, f"holds vectors of {held} values where the model gives "
                                              f"{fresh.shape[1]}", remove=False)
                for shard in self._files:  # not another process's shards written since
                    shard.unlink(missing_ok=True)
                table.clear()
        super().put(keys, values)

    def _write(self, keys: Sequence[str], values: Sequence[np.ndarray] | np.ndarray) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, keys=np.array(list(keys)), vectors=np.asarray(values))
        return buffer.getvalue()


class TextCache(ShardCache[str]):
    """Texts: a shard is a JSON object of key -> text, or -> ``{content, reasoning_content,
    truncated}`` for a served reply whose server gave its reasoning apart (kept raw, split on
    read: ``abduct.kit.reasoning``); a value of any other shape is damage."""

    kind, suffix = "generations", ".json"

    def _read(self, data: bytes) -> dict[str, str]:
        try:
            table: Any = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise ValueError("is not valid JSON (cut short or garbled)") from None
        if not isinstance(table, dict):
            raise ValueError(f"holds a JSON {type(table).__name__}, not an object of texts")
        for key, value in table.items():
            if isinstance(value, dict) and _served_reply(value):  # a served reply with its reasoning_content
                table[key] = ServedReply(value["content"], value["reasoning_content"], value["truncated"])
            elif not isinstance(value, str):
                raise ValueError(f"holds a {type(value).__name__} for key {key[:16]}..., not a text")
        return table

    def _write(self, keys: Sequence[str], values: Sequence[str] | np.ndarray) -> bytes:
        return json.dumps({k: v.raw() if isinstance(v, ServedReply) else v for k, v in zip(keys, values)}).encode()


def _served_reply(value: dict[str, Any]) -> bool:
    return (set(value) == {"content", "reasoning_content", "truncated"} and isinstance(value["content"], str)
            and isinstance(value["reasoning_content"], str) and isinstance(value["truncated"], bool))
