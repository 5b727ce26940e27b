"""Writing small videos with PyAV (synthetic corpora and tests)."""

from __future__ import annotations

import io
from fractions import Fraction
from pathlib import Path

import numpy as np

from abduct.kit import atomic_write_bytes


def write_video(path: str | Path, frames: np.ndarray, fps: float, *, codec: str = "libx264") -> Path:
    """Encode ``frames`` (uint8 ``[T, H, W, 3]`` RGB) as a video at ``fps`` frames per second.

    The container follows the suffix (``.mp4``, ``.mkv``, ``.webm`` ...). H and W must be even:
    the yuv420p pixel format every player and decord read halves both. The file appears whole
    or not at all (encoded in memory, then renamed into place)."""
    import av

    path = Path(path)
    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"frames must be a uint8 array [T, H, W, 3], got {frames.dtype} {list(frames.shape)}")
    count, height, width = frames.shape[:3]
    if count == 0:
        raise ValueError("no frames to write")
    if height % 2 or width % 2:
        raise ValueError(f"frame size {width}x{height} must be even in both directions (yuv420p)")
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    rate = Fraction(fps).limit_denominator(1001)
    fmt = {".mkv": "matroska", ".webm": "webm"}.get(path.suffix.lower(), path.suffix.lower().lstrip(".") or "mp4")
    if fmt == "webm" and codec == "libx264":
        codec = "libvpx-vp9"


    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format=fmt) as container:
        stream = container.add_stream(codec, rate=rate)
        if not isinstance(stream, av.video.stream.VideoStream):
            raise ValueError(f"{codec!r} is not a video codec")
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        if codec == "libx264":
            # near-lossless and no B-frames: decoded pixels stay close to the input (tests compare them)
            stream.options = {"crf": "10", "bf": "0"}
        for image in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    atomic_write_bytes(path, buffer.getvalue())
    return path
