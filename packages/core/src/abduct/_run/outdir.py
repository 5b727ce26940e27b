"""The output directory of a run: checked before any work, locked while the run writes, and
holding a finished run's files only when they are all complete.

- ``--out`` must be a directory abduct can create and write (checked up front, one line);
- a lock (``.abduct.lock``, an advisory ``flock``) refuses a second run on the same ``--out``
  while one is writing (removed when the run ends);
- a finished run of another configuration (its ``results.json``) is refused unless the user
  passes ``--overwrite``; even then it stays, untouched, until the new run's outputs are
  complete and replace it (a rerun that fails leaves it as it was).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from abduct._run.runner import OUTPUT_NAMES, PARTIAL_DIR, RepairWarning, shard_files, stored_units, units_phrase
from abduct._run.shards import SHARD_FILE, SHARD_FILES
from abduct._stats.unitsfile import UNITS_FILE
from abduct.contract.errors import AbductError
from abduct.kit.distributed import Ranks, agree
from abduct.kit.io import atomic_write_bytes, describe_os_error, ensure_writable_dir, require_new_or_regular

T = TypeVar("T")
LOCK_FILE = ".abduct.lock"
RESULTS_FILE = "results.json"
# What makes two finished runs "the same": a re-run of the same configuration may rewrite it.
IDENTITY_FIELDS = ("task", "model", "split", "data_dir", "limit", "seed")


def finished_identity(results: dict[str, Any]) -> dict[str, Any]:
    """``IDENTITY_FIELDS`` as results.json holds them (the model's spec, the data's directory)."""
    identity = {key: results.get(key) for key in IDENTITY_FIELDS}
    model, data = results.get("model"), results.get("data")
    identity["model"] = model.get("spec") if isinstance(model, dict) else model
    identity["data_dir"] = data.get("dir") if isinstance(data, dict) else None
    return identity


def check_finished(out_dir: Path, identity: dict[str, Any], overwrite: bool, keep_partial: bool = False) -> None:
    """Refuse an ``out_dir`` holding another configuration's finished run unless ``overwrite``;
    with ``overwrite``, remove (unless ``keep_partial``) the unfinished units there first, said in
    one warning when there were any; the finished run stays until the new one replaces it."""
    results_file = out_dir / RESULTS_FILE
    if overwrite:  # the finished run stays until the new one replaces it (``replace_outputs``)
        partial = out_dir / PARTIAL_DIR
        if not keep_partial and partial.is_dir():
            kept = stored_units(partial)
            if kept:
                warnings.warn(f"--overwrite: {partial} held {units_phrase(kept)} of an unfinished "
                              "run; removed", RepairWarning, stacklevel=2)
            shutil.rmtree(partial, ignore_errors=True)
        return
    if not results_file.is_file():
        return
    try:
        previous = finished_identity(json.loads(results_file.read_text(encoding="utf-8")))
    except (ValueError, OSError, AttributeError):
        raise AbductError(f"{results_file} cannot be read as a run's results (cut off or edited), so which run "
                          f"{out_dir} holds is unknown; use another --out, or --overwrite to replace it") from None
    differs = [k for k in IDENTITY_FIELDS if previous.get(k) != identity.get(k)]
    if differs:
        raise AbductError(
            f"{out_dir} holds a finished run of {previous.get('task')} / {previous.get('model')} "
            f"(different {', '.join(differs)}); use another --out or pass --overwrite"
        )


@contextlib.contextmanager
def locked(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir``'s lock; a second run on the same directory fails at once, naming it."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): run unlocked rather than not at all
        yield
        return
    path = out_dir / LOCK_FILE
    handle = open(path, "a+")  # noqa: SIM115 (held for the whole run)
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            # The holder removes the file on release: a lock on a file no longer there is stale.
            if os.fstat(handle.fileno()).st_ino != os.stat(path).st_ino:
                raise OSError
        except OSError:
            raise AbductError(f"{out_dir} is being written by another abduct run; wait for it to finish "
                              "or use another --out") from None
        try:
            yield
        finally:
            path.unlink(missing_ok=True)  # before closing, while the lock is still held
    finally:
        handle.close()  # closing releases the lock


STAGING_DIR = ".abduct-new"  # a rerun's outputs, complete before any replaces the finished run's
ASIDE_DIR = ".abduct-old"  # the finished run's outputs while the new ones are renamed in
# A finished run's files that a run of another configuration replaces even when it does not
# write them itself (its pages may show no samples): nothing of the old run is left behind to
# pass for the new one's.
RUN_FILES = (*OUTPUT_NAMES, UNITS_FILE, "samples.html", "samples")


def replace_outputs(out_dir: Path, files: Mapping[str, bytes], folders: Mapping[str, Path]) -> None:
    """Make ``files`` and ``folders`` (staged inside ``out_dir``) the run in ``out_dir``, results.json
    last. Everything is first written into a staging folder beside the finished run, whose files
    stay untouched meanwhile; then the old run's files are moved aside and the new ones renamed
    in. A failure or a signal at any moment (a full disk, Ctrl-C) puts the old run back as it was,
    so ``out_dir`` holds the finished run or the new one, never a mixture nor neither."""
    staging, aside = out_dir / STAGING_DIR, out_dir / ASIDE_DIR
    for left in (staging, aside):  # left by a run killed outright (SIGKILL)
        shutil.rmtree(left, ignore_errors=True)
    try:
        for name in files:  # a FIFO or a device where a file goes is the user's, never replaced
            require_new_or_regular(out_dir / name)
        for name in folders:
            if os.path.lexists(out_dir / name) and (os.path.islink(out_dir / name) or not (out_dir / name).is_dir()):
                raise AbductError(f"output {out_dir / name} is not a directory; refusing to replace it")
        staging.mkdir()
        for name, folder in folders.items():
            folder.chmod(0o755)
            folder.rename(staging / name)
        for name, data in files.items():
            atomic_write_bytes(staging / name, data)
        _swap_in(out_dir, staging, aside, [n for n in files if n != RESULTS_FILE] + list(folders))
    finally:
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(aside, ignore_errors=True)


def _swap_in(out_dir: Path, staging: Path, aside: Path, names: list[str]) -> None:
    """Rename the staged run into ``out_dir``: the old results.json aside first (the folder no
    longer claims a finished run), then the old run's other files, the new ones in, the new
    results.json last; undone, in reverse, on any exception."""
    aside.mkdir()
    moved_aside: list[str] = []
    moved_in: list[str] = []
    try:
        for name in dict.fromkeys([RESULTS_FILE, *RUN_FILES, *names]):
            if os.path.lexists(out_dir / name):
                (out_dir / name).rename(aside / name)
                moved_aside.append(name)
        for name in (*names, RESULTS_FILE):
            (staging / name).rename(out_dir / name)
            moved_in.append(name)
    except BaseException:
        for name in reversed(moved_in):
            with contextlib.suppress(OSError):
                (out_dir / name).rename(staging / name)
        for name in reversed(moved_aside):
            with contextlib.suppress(OSError):
                (aside / name).rename(out_dir / name)
        raise


def restore_interrupted_swap(out_dir: Path) -> None:
    """Undo what a run killed outright (SIGKILL, a power cut) during ``_swap_in`` left: the old
    run's files still aside and no results.json in ``out_dir`` put back, said in one warning;
    a staging or aside folder that is no longer needed removed."""
    aside = out_dir / ASIDE_DIR
    if (aside / RESULTS_FILE).is_file() and not os.path.lexists(out_dir / RESULTS_FILE):
        for entry in sorted(aside.iterdir(), key=lambda p: p.name == RESULTS_FILE):  # results.json last
            target = out_dir / entry.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif os.path.lexists(target):
                target.unlink()
            entry.rename(target)
        warnings.warn(f"{out_dir}: a run replacing the finished run there was killed halfway; the finished run "
                      "is put back", RepairWarning, stacklevel=2)
    for left in (aside, out_dir / STAGING_DIR):
        shutil.rmtree(left, ignore_errors=True)


@contextlib.contextmanager
def keeping_finished(out_dir: Path) -> Iterator[None]:
    """A run that fails while ``out_dir`` holds a finished run says, in its error line, that the
    finished run is left as it was (``replace_outputs`` sees to it)."""
    finished = (out_dir / RESULTS_FILE).is_file()
    try:
        yield
    except (AbductError, OSError) as exc:
        if not finished or not (out_dir / RESULTS_FILE).is_file():
            raise
        said = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
        raise AbductError(f"{said}; the finished run in {out_dir} is left as it was") from exc


def check_shard_out(out_dir: Path, run: Mapping[str, Any], overwrite: bool) -> None:
    """Before a shard runs into ``out_dir``: refuse a folder holding a finished run or another
    shard (of another run, or another index) unless ``overwrite``, which removes those files."""
    if (out_dir / "results.json").is_file():
        raise AbductError(f"{out_dir} holds a finished run; give each shard its own --out (or pass --overwrite)")
    if overwrite or not (out_dir / SHARD_FILE).is_file():
        check_not_a_shard(out_dir, overwrite)  # under --overwrite, removes the shard there
        return
    try:
        previous = json.loads((out_dir / SHARD_FILE).read_text(encoding="utf-8")).get("run")
    except (ValueError, OSError, AttributeError):
        previous = None
    if previous != dict(run):
        differs = ", ".join(k for k in run if not isinstance(previous, dict) or previous.get(k) != run[k]) or "run"
        raise AbductError(f"{out_dir} holds a finished shard of another configuration (different {differs}); "
                          "use another --out or pass --overwrite")


def check_not_a_shard(out_dir: Path, overwrite: bool) -> None:
    """Before a whole run writes into ``out_dir``: a shard's folder is refused unless ``overwrite``."""
    if not (out_dir / SHARD_FILE).is_file():
        return
    if overwrite:
        for name in SHARD_FILES:
            (out_dir / name).unlink(missing_ok=True)
        return
    raise AbductError(f"{out_dir} holds a shard of a run ({SHARD_FILE}): merge it with abduct merge, or use "
                      "another --out (or pass --overwrite)")


def on_main(ranks: Ranks, check: Callable[[], T]) -> T | None:
    """``check()`` on rank 0, its one-line error raised on every rank (none waits for a rank
    that gave up)."""
    value, error = None, None
    if ranks.is_main:
        try:
            value = check()
        except AbductError as exc:
            error = str(exc)
    agree(error, ranks)
    return value


@contextlib.contextmanager
def removed_if_left_empty(out_dir: Path, created: bool) -> Iterator[None]:
    """A run that fails before storing anything leaves no ``--out`` it created (a bad model
    spec, say, is found after ``--out`` was checked); one with stored units keeps them to resume."""
    try:
        yield
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                out_dir.rmdir()  # only when empty
        raise


@contextlib.contextmanager
def claimed(out_dir: Path, identity: dict[str, Any], overwrite: bool, ranks: Ranks,
            shard_identity: dict[str, Any] | None = None) -> Iterator[None]:
    """``--out`` for this run while it runs: writable, locked (rank 0), neither a finished run of
    another configuration nor a shard of another (for a shard: nor a whole run), and removed again
    when the run fails before storing anything in a folder it created."""
    created = not out_dir.exists()
    on_main(ranks, lambda: ensure_writable_dir(out_dir))
    with removed_if_left_empty(out_dir, created and ranks.is_main), \
            locked(out_dir) if ranks.is_main else contextlib.nullcontext():
        on_main(ranks, lambda: restore_interrupted_swap(out_dir))
        on_main(ranks, lambda: check_finished(out_dir, identity, overwrite, keep_partial=True))  # the units: resume
        if shard_identity is not None:
            on_main(ranks, lambda: check_shard_out(out_dir, shard_identity, overwrite))
        else:
            on_main(ranks, lambda: check_not_a_shard(out_dir, overwrite))
        with keeping_finished(out_dir):
            yield


def _resumable_part(signature: dict[str, Any]) -> dict[str, Any]:
    """What must match to resume: the models' fingerprints, not their spec text, so a model that
    declares its fingerprint may be resumed with other transport settings (``retries=10``)."""
    kept = {k: v for k, v in signature.items() if k != "model"}
    if isinstance(kept.get("judge"), dict):
        kept["judge"] = kept["judge"].get("fingerprint")
    return kept


def check_resume(out_dir: Path, signature: dict[str, Any], overwrite: bool = False) -> bool:
    """True when ``out_dir`` holds an unfinished run of this same configuration. Stored units
    of a run that cannot be told (no ``run.json``, or one that does not parse) are said in one
    warning and removed; another configuration's are refused, or with ``overwrite`` said and removed."""
    partial = out_dir / PARTIAL_DIR
    marker = partial / "run.json"
    if not partial.is_dir():
        return False
    try:
        previous = json.loads(marker.read_text(encoding="utf-8"))
        problem = None if isinstance(previous, dict) else f"{marker} does not hold a run's configuration"
    except FileNotFoundError:
        previous, problem = None, f"{partial} has no run.json"
    except (ValueError, OSError):
        previous, problem = None, f"{marker} does not parse"
    kept = stored_units(partial)
    if problem is not None:
        if kept:
            warnings.warn(f"{problem}, so which run stored the {units_phrase(kept)} there is unknown; removed, "
                          f"{'it is' if kept == 1 else 'they are'} computed again", RepairWarning, stacklevel=2)
        elif marker.exists() or shard_files(partial):
            warnings.warn(f"{problem}, and no unit there can be read; removed", RepairWarning, stacklevel=2)
        shutil.rmtree(partial, ignore_errors=True)
        return False
    if _resumable_part(previous) != _resumable_part(signature):
        differs = ", ".join(k for k in signature if previous.get(k) != signature[k]) or "configuration"
        if not overwrite:
            raise AbductError(f"{out_dir} holds an unfinished run with a different {differs} ({units_phrase(kept)} in "
                              f"{partial}); use another --out, or --overwrite to discard it")
        warnings.warn(f"--overwrite: {partial} held an unfinished run with a different {differs} "
                      f"({units_phrase(kept)}); removed", RepairWarning, stacklevel=2)
        shutil.rmtree(partial, ignore_errors=True)
        return False
    return True


def resumes(out_dir: Path, signature: dict[str, Any], overwrite: bool, ranks: Ranks) -> bool:
    """``check_resume`` on rank 0, agreed by every rank."""
    return bool(on_main(ranks, lambda: check_resume(out_dir, signature, overwrite)))
