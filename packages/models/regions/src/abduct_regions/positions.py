"""Box position encodings, normalised to 0-1 by the image size.

- LXMERT: 4-d ``(x1, y1, x2, y2)``;
- UNITER: 7-d ``(x1, y1, x2, y2, w, h, w*h)`` (its ``pos_linear`` takes 7 inputs).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

PositionKind = Literal["lxmert", "uniter"]
POSITION_DIMS = {"lxmert": 4, "uniter": 7}


def normalise_boxes(boxes_xyxy: np.ndarray, width: float, height: float) -> np.ndarray:
    """Pixel ``(x1, y1, x2, y2)`` rows -> fractions of the image, clipped to [0, 1]."""
    boxes = np.asarray(boxes_xyxy, dtype=np.float32).reshape(-1, 4)
    scale = np.array([width, height, width, height], dtype=np.float32)
    return np.clip(boxes / np.maximum(scale, 1e-6), 0.0, 1.0)


def box_positions(normalised: np.ndarray, kind: PositionKind) -> np.ndarray:
    """The position features ``kind`` expects from normalised ``(x1, y1, x2, y2)`` rows."""
    boxes = np.asarray(normalised, dtype=np.float32).reshape(-1, 4)
    if kind == "lxmert":
        return boxes.copy()
    if kind != "uniter":
        raise ValueError(f"unknown position kind {kind!r} (expected lxmert or uniter)")
    w = boxes[:, 2] - boxes[:, 0]
    h = boxes[:, 3] - boxes[:, 1]
    return np.concatenate([boxes, w[:, None], h[:, None], (w * h)[:, None]], axis=1)
