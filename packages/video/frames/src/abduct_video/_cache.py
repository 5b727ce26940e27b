"""On-disk frame cache: one file per (video content, span, sampling settings, backend).

Laid out as abduct's other caches are (``<root>/frames/<hash of the settings>/``), keyed by
the video's bytes (``abduct.kit.content``), so a moved video still hits and an edited one misses.
Each entry is written atomically. What an entry holds is checked as it is read (the ``.npz``
members' own CRCs, then the frames' shape and dtype, the flag's and the duration's): a damaged one
(cut short, bytes flipped, emptied, another format, a directory in its place) is one warning
naming it (``abduct.kit.cache_damaged``), is removed, and the span is decoded again.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np

from abduct.kit import atomic_write_bytes
from abduct.kit.cache import cache_damaged, read_cache_file, read_npz
from abduct_video._settings import SamplingSettings

Entry = tuple[np.ndarray, bool, float]  # frames, clipped, video duration


def _problem(frames: np.ndarray, clipped: np.ndarray, duration: np.ndarray) -> str | None:
    """What is wrong with a stored entry's arrays, or None: frames are ``(n, height, width, 3)``
    bytes, the flag a boolean, the duration a finite number of seconds."""
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        return f"holds frames of shape {frames.shape} and dtype {frames.dtype}, not RGB frames"
    if clipped.shape != () or clipped.dtype != np.bool_:
        return f"holds a clipped flag of shape {clipped.shape} and dtype {clipped.dtype}"
    if duration.shape != () or duration.dtype.kind != "f" or not np.isfinite(duration) or duration < 0:
        return f"holds the duration {duration!r}, not a finite number of seconds"
    return None


class FrameCache:
    kind = "frames"

    def __init__(self, root: str | Path, settings: SamplingSettings, backend: str) -> None:
        fingerprint = f"{settings.fingerprint()}|{backend}"
        self.directory = Path(root) / self.kind / hashlib.sha256(fingerprint.encode()).hexdigest()[:24]

    def _path(self, file_hash: str, span: tuple[float, float]) -> Path:
        span_key = hashlib.sha256(f"{span[0]!r},{span[1]!r}".encode()).hexdigest()[:16]
        return self.directory / file_hash[:2] / f"{file_hash}-{span_key}.npz"

    def get(self, file_hash: str, span: tuple[float, float]) -> Entry | None:
        path = self._path(file_hash, span)
        data = read_cache_file(path)
        if data is None:
            return None
        try:
            stored = read_npz(data)
            frames, clipped, duration = stored["frames"], stored["clipped"], stored["duration"]
        except (ValueError, KeyError) as exc:
            cache_damaged(path, str(exc) if isinstance(exc, ValueError) else f"holds no {exc}")
            return None
        problem = _problem(frames, clipped, duration)
        if problem is not None:
            cache_damaged(path, problem)
            return None
        return frames, bool(clipped), float(duration)

    def put(self, file_hash: str, span: tuple[float, float], entry: Entry) -> None:
        frames, clipped, duration = entry
        buffer = io.BytesIO()
        np.savez(buffer, frames=frames, clipped=np.asarray(clipped), duration=np.asarray(duration))
        atomic_write_bytes(self._path(file_hash, span), buffer.getvalue())
