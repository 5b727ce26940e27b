"""On-disk frame cache: one file per (video content, span, sampling settings, backend).

Laid out as abduct's other caches are (``<root>/frames/<hash of the settings>/``), keyed by
the video's bytes (``abduct.kit.content``), so a moved video still hits and an edited one misses.
Each entry is written atomically; an unreadable one is decoded again.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np

from abduct.kit import atomic_write_bytes
from abduct_video._settings import SamplingSettings

Entry = tuple[np.ndarray, bool, float]  # frames, clipped, video duration


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
        try:
            with np.load(path) as stored:
                return stored["frames"], bool(stored["clipped"]), float(stored["duration"])
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            return None

    def put(self, file_hash: str, span: tuple[float, float], entry: Entry) -> None:
        frames, clipped, duration = entry
        buffer = io.BytesIO()
        np.savez(buffer, frames=frames, clipped=np.asarray(clipped), duration=np.asarray(duration))
        atomic_write_bytes(self._path(file_hash, span), buffer.getvalue())
