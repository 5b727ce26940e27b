"""Reading torch checkpoint files safely, for every package that loads weights: a pickle never runs code
(``torch.load(weights_only=True)``; safetensors for ``.safetensors``), and a file that is not
a weights-only checkpoint (a text file, a pickle with a payload, a truncated file) is one
line naming the file and the loader that refused it.

Weights a library saves into an output (safetensors creates its files owner-only) get the
mode ``open`` would give them with ``honour_umask``.

torch is imported by name when called: only torch plugins call these.
"""

from __future__ import annotations

import importlib
import json
import pickle
import re
import stat
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.kit import atomic_write_text, read_json

HF_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")  # what save_pretrained writes, one file or shards


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


def stored_shapes(path: str | Path, *, loader: str) -> dict[str, tuple[int, ...]]:
    """The name and shape of every tensor in a weights file, without reading the tensors: the
    header of a ``.safetensors`` file, a torch file loaded weights-only onto the ``meta`` device.
    What a config claims can then be checked before a network of that size is built."""
    file = Path(path)
    if file.suffix != ".safetensors":
        state = load_weights_only(file, loader=loader, map_location="meta")
        if isinstance(state, dict) and isinstance(state.get("model"), dict):
            state = state["model"]  # a training checkpoint that wraps its state dict
        if not isinstance(state, dict):
            raise DataError(f"the {loader} loader found a {type(state).__name__}, expected a state dict", file=file)
        return {str(k): tuple(v.shape) for k, v in state.items() if hasattr(v, "shape")}
    if not file.is_file():
        raise DataError(f"the {loader} loader found no file here", file=file)
    try:
        safetensors = importlib.import_module("safetensors")
        with safetensors.safe_open(str(file), framework="numpy") as opened:
            return {str(k): tuple(int(n) for n in opened.get_slice(k).get_shape()) for k in opened.keys()}
    except Exception as exc:  # noqa: BLE001 — safetensors raises its own error types for a bad header
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise DataError(f"the {loader} loader refused it: not a readable safetensors file ({first})", file=file) from None


def hf_stored_shapes(directory: Path, *, loader: str) -> tuple[Path, dict[str, tuple[int, ...]]] | None:
    """The weights file of a Hugging Face directory (its shard index when sharded) and the shapes
    of all its tensors (``stored_shapes``); None when it holds none (``from_pretrained`` says so)."""
    for name in HF_WEIGHT_FILES:
        if (directory / name).is_file():
            return directory / name, stored_shapes(directory / name, loader=loader)
        index = directory / f"{name}.index.json"
        if index.is_file():
            weight_map = read_json(index, f"{loader} shard index")
            weight_map = weight_map.get("weight_map") if isinstance(weight_map, dict) else None
            if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
                raise DataError("expected an object of tensor names to shard files", file=index, field="weight_map")
            shapes: dict[str, tuple[int, ...]] = {}
            for shard in sorted(set(weight_map.values())):  # a shard's own name only: never outside the directory
                shapes.update(stored_shapes(directory / Path(shard).name, loader=loader))
            return index, shapes
    return None


@dataclass(frozen=True)
class StoredSize:
    """A config field the weights tell: dimension ``axis`` of the tensor whose name ends with
    ``tensor``, or (``axis`` None) how many numbered blocks ``tensor.N.`` the weights hold."""

    field: str
    tensor: str
    axis: int | None = 0


def _stored_size(shapes: Mapping[str, tuple[int, ...]], want: StoredSize) -> int | None:
    if want.axis is None:
        pattern = re.compile(rf"(?:^|\.){re.escape(want.tensor)}\.(\d+)\.")
        return len({m.group(1) for m in map(pattern.search, shapes) if m})
    for name, shape in shapes.items():
        if (name == want.tensor or name.endswith("." + want.tensor)) and len(shape) > want.axis:
            return shape[want.axis]
    return None


def check_sizes_against_weights(config_file: Path, values: Mapping[str, Any], weights: Path,
                                 shapes: Mapping[str, tuple[int, ...]], expected: Sequence[StoredSize]) -> None:
    """Refuse a config whose sizes (``values``: what the network would be built with) disagree
    with the stored tensors: a hostile ``vocab_size: 100000000`` would otherwise allocate that
    network before the weights are read. One line naming the config file and the field."""
    for want in expected:
        stored = _stored_size(shapes, want)
        if stored is None:
            raise DataError(f"cannot be checked: {weights.name} holds no '{want.tensor}' tensor",
                            file=config_file, field=want.field)
        value = values.get(want.field)
        if isinstance(value, bool) or value != stored:
            raise DataError(f"is {str(value)[:40]}, the weights in {weights.name} have {stored}",
                            file=config_file, field=want.field)


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
    atomic_write_text(log, "".join(json.dumps(r, allow_nan=False) + "\n" for r in rows))
    if not quiet:
        text = " ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items())
        print(f"[train {name}] {text}", file=sys.stderr, flush=True)


def honour_umask(root: Path) -> None:
    """Give ``root`` and everything under it the mode ``open``/``mkdir`` would give there: for
    what a library wrote owner-only (safetensors files are created 0o600) into an output."""
    root = Path(root)
    probe = root / f".mode-{uuid.uuid4().hex}"  # a folder made as mkdir makes one: the umask's mode, read without setting it
    probe.mkdir()
    try:
        folder = stat.S_IMODE(probe.stat().st_mode) & 0o777
    finally:
        probe.rmdir()
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(folder if path.is_dir() else folder & 0o666)
