"""The output directory of a run: checked before any work, locked while the run writes, and
holding a finished run's files only when they are all complete.

- ``--out`` must be a directory abduct can create and write (checked up front, one line);
- a lock (``.abduct.lock``, an advisory ``flock``) refuses a second run on the same ``--out``
  while one is writing (removed when the run ends);
- a finished run of another configuration (its ``results.json``) is refused unless the user
  passes ``--overwrite``, which then removes only abduct's own output files.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from abduct._run.runner import OUTPUT_NAMES, PARTIAL_DIR, RepairWarning, stored_units, units_phrase
from abduct.contract.errors import AbductError

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
    with ``overwrite``, remove abduct's outputs and (unless ``keep_partial``) its unfinished
    units there first, said in one warning when there were any."""
    results_file = out_dir / RESULTS_FILE
    if overwrite:
        for name in OUTPUT_NAMES:
            (out_dir / name).unlink(missing_ok=True)
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


def publish_folder(out_dir: Path, name: str, folder: Path) -> None:
    """Replace ``out_dir/name`` by ``folder`` (staged inside ``out_dir``) in one rename; an old
    one is moved aside first and removed after, so a reader sees the old folder or the new."""
    target = out_dir / name
    folder.chmod(0o755)
    staged = out_dir / f".{name}.new"
    shutil.rmtree(staged, ignore_errors=True)
    shutil.move(str(folder), staged)
    old = out_dir / f".{name}.old"
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
    staged.rename(target)
    shutil.rmtree(old, ignore_errors=True)
