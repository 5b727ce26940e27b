"""File helpers: atomic writes, hashing and JSON reading with errors that name the file, and
the hub cache's snapshot a release is read from."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import math
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from abduct.contract.errors import AbductError, DataError

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask. Linux reports it in /proc; elsewhere it can only be read by
    setting it, so it is set back at once under a lock."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


@contextlib.contextmanager
def _naming_the_file(path: Path) -> Iterator[None]:
    """An OSError in the block that names no file gets ``path`` as its file name. The kernel
    names none for write(2), fsync(2) and close(2) (a full disk, a file over the size limit, a
    quota), so without this the user reads "No space left on device" and not where."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and exc.errno is not None:  # (without an errno, str() would lose the message)
            exc.filename = str(path)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    The file gets the mode ``open()`` would give it (0o666 less the umask, so 0o644 under the
    usual 022): ``mkstemp`` creates its temporary file 0o600, which would make every output
    unreadable to colleagues on a shared machine."""
    path = Path(path)
    require_new_or_regular(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with _naming_the_file(path):
            os.fchmod(fd, 0o666 & ~current_umask())
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n")


def atomic_write_jsonl(path: Path, records: Iterable[Any]) -> None:
    """JSON lines, atomically: the run's own records and shards."""
    atomic_write_text(path, "".join(json.dumps(r, allow_nan=False) + "\n" for r in records))


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def require_file(path: Path, what: str = "file") -> Path:
    path = Path(path)
    if not path.exists():
        raise AbductError(f"{what} not found: {path}")
    if not path.is_file():
        raise AbductError(f"{what} is not a file: {path}")
    return path


def require_new_or_regular(path: Path, what: str = "output") -> Path:
    """Refuse to write over anything but a regular file: replacing ``/dev/sda`` or a FIFO with
    a regular file is never what the user meant."""
    path = Path(path)
    if (path.exists() or path.is_symlink()) and not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file (a device, FIFO or socket)"
        raise AbductError(f"{what} {path} is {kind}; refusing to replace it")
    return path


def require_dir(path: Path, what: str = "directory") -> Path:
    path = Path(path)
    if not path.exists():
        raise AbductError(f"{what} not found: {path}")
    if not path.is_dir():
        raise AbductError(f"{what} is not a directory: {path}")
    return path


class _NotStrictJSON(ValueError):
    """What JSON's grammar allows but a number or a key table must not hold."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    table = dict(pairs)
    if len(table) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _NotStrictJSON(f"duplicate key '{twice}' (the later value would silently win)")
    return table


def _no_constants(name: str) -> Any:
    raise _NotStrictJSON(f"{name} is not a JSON number (only finite numbers are allowed)")


def _beyond_floats(text: str, allow: bool) -> float:
    if not allow:
        raise _NotStrictJSON(f"{text[:20]}{'...' if len(text) > 20 else ''} is beyond the range of a "
                             "64-bit float (only finite numbers are allowed)")
    return -math.inf if text.startswith("-") else math.inf


def _number_readers(allow: bool) -> dict[str, Any]:
    """``1e400`` would read as infinity and a 400-digit integer as an int no float holds (a
    later ``float()`` or ``isfinite`` raises): both are read as +-inf when non-finite numbers
    are allowed (the caller names the record), else refused."""
    def read_float(text: str) -> float:
        value = float(text)
        return value if math.isfinite(value) else _beyond_floats(text, allow)

    def read_int(text: str) -> int | float:
        if len(text.lstrip("-")) <= 309:  # more digits cannot be a float (and int() may refuse them)
            value = int(text)
            try:
                float(value)
                return value
            except OverflowError:
                pass
        return _beyond_floats(text, allow)

    return {"parse_float": read_float, "parse_int": read_int}


def read_json(path: Path, what: str = "file", *, allow_non_finite: bool = False) -> Any:
    """Parse a JSON file strictly; a missing file, malformed JSON, a duplicate key in an
    object or a NaN/Infinity number (also one beyond the float range, ``1e400``) becomes a
    one-line DataError naming the file.

    ``allow_non_finite`` lets NaN/Infinity (and numbers beyond the float range, read as
    +-inf) through for readers that check every number themselves and can then name the
    record holding it (predictions files)."""
    require_file(path, what)
    constants = None if allow_non_finite else _no_constants
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return json.load(handle, object_pairs_hook=_no_duplicate_keys, parse_constant=constants,
                             **_number_readers(allow_non_finite))
    except _NotStrictJSON as exc:
        raise DataError(str(exc), file=path) from None
    except RecursionError:
        raise DataError("JSON nested too deeply", file=path) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", file=path) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None


def read_csv_cells(path: Path) -> list[list[str]]:
    """Every row of a UTF-8 CSV file (BOM allowed), header first, as cell texts; one-line
    errors naming the file for bad encoding, bad CSV and an empty file."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.reader(handle))
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    except csv.Error as exc:
        raise DataError(f"not valid CSV ({exc})", file=path) from None
    if not rows:
        raise DataError("empty file (no header)", file=path)
    return rows


def read_keyed_predictions(path: Path, ids: Sequence[str], *, shape: str, noun: str) -> dict[str, Any]:
    """A predictions file holding a JSON object with exactly the keys ``ids`` (values unchecked;
    non-finite numbers allowed, for the caller to report per record). ``shape`` describes the
    object (``keyed by image_id``), ``noun`` one key (``image``) in the errors."""
    data = read_json(path, "predictions file", allow_non_finite=True)
    if not isinstance(data, dict):
        raise DataError(f"expected a JSON object {shape}, got {type(data).__name__}", file=path)
    known = set(ids)
    for key in data:
        if key not in known:
            raise DataError(f"not {'an' if noun[:1] in 'aeiou' else 'a'} {noun} id of the answer key",
                            file=path, record=key)
    missing = [key for key in ids if key not in data]
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise DataError(f"no prediction for {len(missing)} {noun}(s): {shown}", file=path, record=missing[0])
    return data


def ensure_writable_dir(path: Path, option: str = "--out") -> Path:
    """Create ``path`` if needed and check abduct may write in it; one-line errors otherwise."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise AbductError(f"{option} {path} is a file, not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AbductError(f"cannot create {option} {path}: {describe_os_error(exc)}") from None
    probe = path / f".abduct-write-test-{os.getpid()}"
    try:
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise AbductError(f"cannot write in {option} {path}: {describe_os_error(exc)}") from None
    return path


@contextlib.contextmanager
def building_folder(path: Path, option: str = "--out") -> Iterator[Path]:
    """A folder beside ``path`` to write a whole folder's content in (a corpus, say); when the
    block ends without an exception its entries become ``path``'s (``path`` created if needed, an
    entry of the same name replaced), else it is removed and ``path`` is left as it was: a full
    disk or Ctrl-C halfway leaves no partial content that could pass for whole. One-line errors
    when ``path`` cannot be written."""
    target = Path(path).resolve()
    if target.exists():
        ensure_writable_dir(target, option)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=target.parent))
    except OSError as exc:
        raise AbductError(f"cannot create {option} {path}: {describe_os_error(exc)}") from None
    try:
        with _naming_the_file(target):  # a write in the block that fails names the folder at least
            yield staging
        staging.chmod(0o777 & ~current_umask())  # mkdtemp's 0o700, as mkdir would have made it
        if target.is_dir() and not any(target.iterdir()):
            target.rmdir()
        if not target.exists():
            staging.rename(target)
            return
        _move_entries(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _move_entries(staging: Path, target: Path) -> None:
    """Rename ``staging``'s entries into ``target``, each old one of the same name moved aside
    first and removed after; on any exception, what was done is undone."""
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    done: list[tuple[str, bool]] = []  # (name, whether an old entry was moved aside)
    try:
        for entry in sorted(staging.iterdir()):
            replaced = os.path.lexists(target / entry.name)
            if replaced:
                (target / entry.name).rename(aside / entry.name)
            done.append((entry.name, replaced))
            entry.rename(target / entry.name)
    except BaseException:
        for name, replaced in reversed(done):
            with contextlib.suppress(OSError):
                if (target / name).exists() and not (staging / name).exists():
                    (target / name).rename(staging / name)
                if replaced:
                    (aside / name).rename(target / name)
        raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def describe_os_error(exc: OSError) -> str:
    """One line for a file-system error: what was refused and where (no traceback)."""
    reason = exc.strerror or type(exc).__name__
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    return f"{' -> '.join(names)}: {reason}" if names else f"{reason} ({exc})"


def hub_snapshot(repo_folder: Path, holds: Callable[[Path], bool] = Path.is_dir) -> Path | None:
    """The snapshot to read of a dataset repository in the Hugging Face hub cache
    (``datasets--OWNER--NAME``, holding ``snapshots/<commit>/`` and ``refs/main``, as
    ``huggingface_hub`` leaves it; files only, never the network): the commit ``refs/main``
    names, else the only snapshot that ``holds`` the release's files; None where there is none.
    Several candidates and no ``refs/main`` naming one is one line listing them (the user passes
    one as ``--data``)."""
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
