"""Tiny generated videos for tests (this package's and those of packages built on it).

In a "counter" video frame i is a flat grey of level 8*i, so a decoded frame tells its own
index (codecs keep flat greys within a level or two)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np

GREY_STEP = 8


def counter_frames(count: int, height: int = 32, width: int = 32) -> np.ndarray:
    levels = (np.arange(count) * GREY_STEP).astype(np.uint8)
    return np.broadcast_to(levels[:, None, None, None], (count, height, width, 3)).copy()


def frame_numbers(frames: np.ndarray) -> list[int]:
    """The index each counter frame shows."""
    return [int(round(float(f.mean()) / GREY_STEP)) for f in frames]


def moving_frames(count: int, height: int = 32, width: int = 64, seed: int = 0) -> np.ndarray:
    """A textured background with a bright square moving right: content both decoders must agree on."""
    rng = np.random.default_rng(seed)
    background = rng.integers(40, 200, size=(height // 4, width // 4, 3), dtype=np.uint8)
    background = background.repeat(4, axis=0).repeat(4, axis=1)
    frames = np.repeat(background[None], count, axis=0)
    for i in range(count):
        left = (i * 3) % (width - 8)
        frames[i, 8:16, left:left + 8] = (250, 250, 30)
    return frames


def write_gapped_video(path: Path, count: int = 31, gap_at: int = 30, resume_at: float = 5.0) -> Path:
    """A variable-frame-rate counter video: frames 0..gap_at-1 at 30 fps, then a jump to
    ``resume_at`` seconds. Its average rate misplaces every frame; its timestamps do not."""
    import av

    frames = counter_frames(count)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=30)
        if not isinstance(stream, av.video.stream.VideoStream):
            raise TypeError("libx264 did not give a video stream")
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        stream.options = {"bf": "0", "crf": "10"}
        stream.codec_context.time_base = Fraction(1, 30)
        for i, image in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts = i if i < gap_at else round(resume_at * 30) + (i - gap_at)
            frame.time_base = Fraction(1, 30)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def write_stalling_video(path: Path) -> Path:
    """A regular file that stalls any decoder: an ffconcat list (which ffmpeg recognises by its
    content, whatever the suffix) naming a FIFO beside it, whose opening blocks until a writer
    comes, which never does. Only a time limit ends the wait."""
    import os

    fifo = path.with_name(f"{path.stem}.pipe.mp4")
    if not fifo.exists():
        os.mkfifo(fifo)
    path.write_text(f"ffconcat version 1.0\nfile {fifo.name}\n")
    return path


def write_overlisted_video(path: Path, count: int = 20, extra: int = 10, seed: int = 0) -> Path:
    """A counter video whose container lists ``extra`` more frames than it holds: after the
    real packets come packets of random bytes with later timestamps. The header's frame count
    (and decord's ``len``) says ``count + extra``; ``count`` frames decode."""
    import av

    rng = np.random.default_rng(seed)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=10)
        if not isinstance(stream, av.video.stream.VideoStream):
            raise TypeError("libx264 did not give a video stream")
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        stream.options = {"bf": "0", "crf": "10"}
        packets = []
        for image in counter_frames(count):
            packets.extend(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
        packets.extend(stream.encode())
        for packet in packets:
            container.mux(packet)  # muxing moves the timestamps to the stream's time base
        first, second, last = (int(packets[i].pts or 0) for i in (0, 1, -1))
        step = second - first
        for k in range(1, extra + 1):
            junk = av.Packet(rng.integers(0, 256, 40, dtype=np.uint8).tobytes())
            junk.stream = stream
            junk.pts = junk.dts = last + k * step
            junk.duration, junk.time_base = step, packets[0].time_base
            container.mux(junk)
    return path
