"""How frames are picked from a time span: the settings, and the frame indices they give."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

Mode = Literal["uniform", "rate"]


@dataclass(frozen=True)
class SamplingSettings:
    """Which frames of each time span a model gets.

    - ``mode="uniform"``: ``frames_per_span`` frames, one at the middle of each of that many
      equal parts of the span (a zero-length span repeats its one frame);
    - ``mode="rate"``: one frame every ``1/fps`` seconds from the span's start (at least one);
      a span that would give more than ``max_frames_per_span`` gets that many, spread uniformly
      (VAR's features: one step each 0.5 s, at most 48 per event);
    - ``size``: None keeps the decoded size; an int resizes the shorter side to it (aspect
      kept, the larger side rounded to an even number); ``(height, width)`` resizes exactly;
    - ``max_spans``: how many spans of one input (its own, then its related inputs', in
      order) :meth:`FrameSampler.frames` reads; later ones are left out (VAR scores only
      the first 12 events of an example). None reads all.
    """

    mode: Mode = "uniform"
    frames_per_span: int = 8
    fps: float = 2.0
    max_frames_per_span: int = 48
    size: int | tuple[int, int] | None = None
    max_spans: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("uniform", "rate"):
            raise ValueError(f"mode must be 'uniform' or 'rate', got {self.mode!r}")
        if self.frames_per_span < 1 or self.max_frames_per_span < 1:
            raise ValueError("frames_per_span and max_frames_per_span must be at least 1")
        if not self.fps > 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        if self.max_spans is not None and self.max_spans < 1:
            raise ValueError("max_spans must be at least 1 (or None for all)")
        size = self.size
        if isinstance(size, list):  # from JSON or a CLI option
            object.__setattr__(self, "size", size := tuple(size))
        if size is not None and not (
            (isinstance(size, int) and size > 0)
            or (isinstance(size, tuple) and len(size) == 2 and all(isinstance(v, int) and v > 0 for v in size))
        ):
            raise ValueError(f"size must be None, a positive int or (height, width), got {size!r}")

    @classmethod
    def var(cls, size: int | tuple[int, int] | None = None) -> SamplingSettings:
        """The VAR benchmark's sampling: 2 frames per second, at most 48 per event, first 12 events."""
        return cls(mode="rate", fps=2.0, max_frames_per_span=48, size=size, max_spans=12)

    def fingerprint(self) -> str:
        """A short hash of every setting that changes which pixels come out (the cache key's half)."""
        fields = dataclasses.asdict(self)
        fields.pop("max_spans")  # decides which spans are read, not what a span gives
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]

    def output_size(self, height: int, width: int) -> tuple[int, int] | None:
        """(height, width) frames of a ``height`` x ``width`` video are resized to; None to keep them."""
        if self.size is None:
            return None
        if isinstance(self.size, tuple):
            return self.size
        scale = self.size / min(height, width)
        if height <= width:
            return self.size, max(2, 2 * round(width * scale / 2))
        return max(2, 2 * round(height * scale / 2)), self.size


def span_times(settings: SamplingSettings, start: float, end: float) -> np.ndarray:
    """The times (seconds) at which ``settings`` takes frames in ``[start, end]``."""
    length = max(0.0, end - start)
    if settings.mode == "uniform":
        count = settings.frames_per_span
        return start + (np.arange(count) + 0.5) * (length / count)
    steps = max(1, math.ceil(length * settings.fps - 1e-9))
    if steps <= settings.max_frames_per_span:
        return start + np.arange(steps) / settings.fps
    count = settings.max_frames_per_span
    return start + (np.arange(count) + 0.5) * (length / count)


def frame_indices(times: np.ndarray, frame_starts: np.ndarray) -> np.ndarray:
    """For each time, the index of the frame on screen then: the last frame starting at or before it.

    ``frame_starts`` are the frames' presentation times (sorted, from the container's own
    timestamps, so variable frame rates and gaps map correctly where ``time * fps`` would not)."""
    found = np.searchsorted(frame_starts, times + 1e-6, side="right") - 1
    return np.clip(found, 0, len(frame_starts) - 1).astype(np.int64)
