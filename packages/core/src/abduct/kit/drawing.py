"""Reading and checking image files, for datasets and models alike: one line naming the file
for a missing, undecodable or oversized image, and no blocking on a FIFO or device.

Drawing regions as a model sees them (the paper's overlay, the ablations' input modes) is
``abduct_modelkit.drawing``'s, in the abduct-modelkit distribution.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from abduct.contract.errors import DataError


def require_regular_image(path: str | Path) -> str:
    """``path``, unless it exists and is not a regular file: opening a FIFO blocks for ever and a
    device never ends, so they are refused before PIL reads them (DataError naming the file)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return str(path)  # missing or a symlink loop: the opener's own error names it
    if not stat.S_ISREG(mode):
        raise DataError("image is not a regular file (a directory, FIFO or device)", file=str(path))
    return str(path)


def load_rgb(path: str) -> Image.Image:
    """Decode an image file as RGB; a missing or unreadable file raises DataError naming it."""
    try:
        with Image.open(require_regular_image(path)) as image:
            return image.convert("RGB")
    except FileNotFoundError:
        raise DataError("image file not found", file=path) from None
    except Image.DecompressionBombError as exc:  # PIL's guard against huge images, kept on purpose
        raise DataError(f"image too large to decode safely ({exc})", file=path) from None
    except (UnidentifiedImageError, OSError) as exc:
        raise DataError(f"cannot decode image ({exc})", file=path) from None


def image_problem(path: str | Path, size: tuple[int, int] | None = None) -> str | None:
    """What a data check reports about one image file: missing, undecodable, or (given the
    size an annotation states) another size; None when it is fine."""
    if not Path(path).is_file():
        return f"image missing: {path}" if not Path(path).exists() else f"image not a regular file: {path}"
    try:
        with Image.open(path) as image:
            found = image.size
            image.verify()
    except Exception as exc:  # any decoder error: report it, the check goes on
        return f"image unreadable: {path} ({type(exc).__name__}: {exc})"
    if size is not None and found != size:
        return f"image {path} is {found[0]}x{found[1]}, the annotation says {size[0]}x{size[1]}"
    return None
