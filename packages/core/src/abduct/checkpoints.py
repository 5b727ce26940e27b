"""Reading torch checkpoint files safely, for every package: a pickle never runs code
(``torch.load(weights_only=True)``; safetensors for ``.safetensors``), and a file that is not
a weights-only checkpoint (a text file, a pickle with a payload, a truncated file) is one
line naming the file and the loader that refused it.

torch is imported by name when called: only torch plugins call these.
"""

from __future__ import annotations

import importlib
import pickle
from pathlib import Path
from typing import Any

from abduct.errors import DataError


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
