"""A contact sheet: frame arrays laid out one row per span, as a PNG."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from abduct.kit import atomic_write_bytes


def contact_sheet(rows: Sequence[np.ndarray], gap: int = 2) -> np.ndarray:
    """Stack ``rows`` (each ``[T, H, W, 3]``) into one image; shorter rows are padded with white."""
    height = max(r.shape[1] for r in rows)
    width = max(r.shape[0] * (r.shape[2] + gap) for r in rows) - gap
    sheet = np.full((len(rows) * (height + gap) - gap, max(width, 1), 3), 255, np.uint8)
    for y, row in enumerate(rows):
        for x, frame in enumerate(row):
            top, left = y * (height + gap), x * (frame.shape[1] + gap)
            sheet[top:top + frame.shape[0], left:left + frame.shape[1]] = frame
    return sheet


def write_contact_sheet(path: str | Path, rows: Sequence[np.ndarray]) -> Path:
    buffer = io.BytesIO()
    Image.fromarray(contact_sheet(rows)).save(buffer, format="PNG")
    atomic_write_bytes(Path(path), buffer.getvalue())
    return Path(path)
