"""Reading torch checkpoint files safely, for every package: a pickle never runs code
(``torch.load(weights_only=True)``; safetensors for ``.safetensors``), and a file that is not
a weights-only checkpoint (a text file, a pickle with a payload, a truncated file) is one
line naming the file and the loader that refused it.

torch is imported by name when called: only torch plugins call these.
"""

from __future__ import annotations

import importlib
import json
import pickle
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from abduct.contract.errors import AbductError, DataError
from abduct.kit.io import atomic_write_jsonl


def load_weights_only(path: str | Path, *, loader: str, map_location: Any = "cpu") -> Any:
    """The object stored in ``path`` (tensors, containers of tensors and plain values only).

    ``loader`` names the caller in the error (``"clip checkpoint"``, ``"t5 optimizer state"``)."""
    file = Path(path)
    if not file.is_file():
        raise DataError(f"the {loader} loader found no file here", file=file)
    try:
        if file.suffix == ".safetensors":
            safetensors_torch = importlib.import_module("safetensors.torch")
            device = map_location if isinstance(map_location, str) else str(map_location)
            return safetensors_torch.load_file(str(file), device=device)
        torch = importlib.import_module("torch")
        return torch.load(str(file), map_location=map_location, weights_only=True)
    except Exception as exc:  # noqa: BLE001 — bad bytes surface as any exception the (safe) unpickler meets
        if isinstance(exc, pickle.UnpicklingError) and "weights_only" in str(exc):
            exc = pickle.UnpicklingError("it holds objects other than tensors, refused unexecuted")
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise DataError(f"the {loader} loader refused it: not a weights-only checkpoint ({first})",
                        file=file) from None


def settings_signature(settings: Mapping[str, Any]) -> str:
    """The settings a resumed run must share with the run that wrote its checkpoint, as one
    comparable string (key order does not matter)."""
    return json.dumps(dict(settings), sort_keys=True)


def check_resume_signature(checkpoint: Path, stored: Any, expected: str) -> None:
    """Resuming with other settings would silently mix two runs: refuse, naming the checkpoint."""
    if stored != expected:
        raise AbductError(f"{checkpoint} was written by a run with other settings ({stored}); "
                          "use another --out or delete it")


def log_rows_through(log: Path, step: int) -> list[dict[str, Any]]:
    """The rows of a JSON-lines training log up to ``step``: a resumed run drops the lines
    of steps its checkpoint does not include (none when there is no log yet)."""
    if not log.is_file():
        return []
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [r for r in rows if r.get("step", 0) <= step]


def append_log(rows: list[dict[str, Any]], log: Path, row: dict[str, Any], *, name: str, quiet: bool) -> None:
    """Add ``row`` to a trainer's ``rows`` and rewrite ``log`` (JSON lines, atomically, so a
    kill never leaves half a line); unless ``quiet``, print it as ``[train NAME] key value ...``."""
    rows.append(row)
    atomic_write_jsonl(log, rows)
    if not quiet:
        text = " ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items())
        print(f"[train {name}] {text}", file=sys.stderr, flush=True)
