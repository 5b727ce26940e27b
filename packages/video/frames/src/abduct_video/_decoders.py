"""The two ways of turning frame indices into pixels: decord (fast) and PyAV (everywhere).

Both take sorted, distinct indices into the probe's frame list, and return RGB uint8
``[N, H, W, 3]``. Readers are kept open per process (a few at a time) because VAR chains read
one video several times, and opening is where decord scans the whole file.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

import numpy as np

from abduct_video._probe import VideoInfo
from abduct_video.errors import VideoError

BACKENDS = ("decord", "pyav")


class DecordCannotCopy(Exception):
    """decord 0.6 decodes frames of some widths (48 or 72 pixels at a height of 32, for one) into
    padded rows and then refuses to copy them out ("DECORDArrayCopyFromTo: The size must exactly
    match"); the caller reads such a video with PyAV instead."""


class _Readers:
    """A small least-recently-used set of open readers, keyed by path and file identity."""

    def __init__(self, keep: int = 4) -> None:
        self.keep = keep
        self.open: OrderedDict[tuple[object, ...], Any] = OrderedDict()

    def get(self, key: tuple[object, ...]) -> Any:
        reader = self.open.pop(key, None)
        if reader is not None:
            self.open[key] = reader
        return reader

    def put(self, key: tuple[object, ...], reader: Any) -> None:
        self.open[key] = reader
        while len(self.open) > self.keep:
            _, old = self.open.popitem(last=False)
            close = getattr(old, "close", None)
            if close is not None:
                close()


class DecordDecoder:
    name = "decord"

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self.readers = _Readers()

    def read(self, path: str, key: tuple[object, ...], info: VideoInfo, indices: np.ndarray,
             size: tuple[int, int] | None) -> np.ndarray:
        import decord  # type: ignore[import-untyped]

        reader_key = (*key, size)
        reader = self.readers.get(reader_key)
        try:
            if reader is None:
                height, width = size if size is not None else (-1, -1)
                reader = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=self.threads,
                                            width=width, height=height)
                self.readers.put(reader_key, reader)
            # A container may report more frames than it holds; indices past the real end make
            # get_batch spin forever in native code (decord issue 373), so the probe's count caps them.
            last = min(len(reader), info.frame_count) - 1
            if last < 0:
                raise VideoError(path, "has no decodable frames")
            frames: np.ndarray = reader.get_batch(np.minimum(indices, last).tolist()).asnumpy()
            # get_batch leaves decoded frames buffered in the reader, which grows with every call
            # (decord issues 197, 208); seeking back to the start releases them.
            reader.seek(0)
        except VideoError:
            raise
        except (RuntimeError, decord.DECORDError) as error:
            if "DECORDArrayCopyFromTo" in str(error):
                raise DecordCannotCopy(path) from None
            raise VideoError(path, f"decord cannot decode it ({_decord_reason(error)})") from None
        return frames


def _decord_reason(error: Exception) -> str:
    """decord's message without its log prefix (time and source file of the library's build)."""
    last = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
    return re.sub(r"\[[\d:]+\] \S+:\d+: ", "", last)


class PyAVDecoder:
    name = "pyav"

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self.readers = _Readers()

    def read(self, path: str, key: tuple[object, ...], info: VideoInfo, indices: np.ndarray,
             size: tuple[int, int] | None) -> np.ndarray:
        import av

        container = self.readers.get(key)
        try:
            if container is None:
                container = av.open(path)
                self.readers.put(key, container)
            stream = container.streams.video[0]
            targets = info.frame_pts[indices]
            found = _decode_targets(container, stream, targets, info.keyframe_pts)
        except av.error.FFmpegError as error:
            raise VideoError(path, f"PyAV cannot decode it ({error})") from None
        height, width = size if size is not None else (info.height, info.width)
        return np.stack([
            frame.to_ndarray(format="rgb24", width=width, height=height, interpolation="BILINEAR")
            for frame in (found[int(target)] for target in targets)
        ])


def _decode_targets(container: Any, stream: Any, targets: np.ndarray, keyframes: np.ndarray) -> dict[int, Any]:
    """Decode the frames whose timestamps are ``targets`` (sorted), seeking only where the
    next target lies past a keyframe not yet reached (decoding through is cheaper otherwise).
    Frames are matched by timestamp, never by counting, so an inexact seek cannot shift them."""
    found: dict[int, Any] = {}
    frames = None
    last_pts: int | None = None
    previous = None
    for target in (int(t) for t in targets):
        if target in found:
            continue
        keyframe = int(keyframes[max(0, int(np.searchsorted(keyframes, target, side="right")) - 1)])
        if frames is None or last_pts is None or keyframe > last_pts or target <= last_pts:
            container.seek(target, stream=stream, backward=True, any_frame=False)
            frames = container.decode(stream)
            previous = None
        for frame in frames:
            if frame.pts is None:
                continue
            last_pts = frame.pts
            if frame.pts == target:
                found[target] = previous = frame
                break
            if frame.pts > target:  # the target's own frame was not produced: the one on screen then
                found[target] = previous if previous is not None else frame
                break
            previous = frame
        else:
            if previous is None:
                raise VideoError(str(container.name), f"no frame decoded at timestamp {target}")
            found[target] = previous
            frames = None
    return found


def make_decoder(backend: str, threads: int = 1) -> DecordDecoder | PyAVDecoder:
    if backend == "decord":
        return DecordDecoder(threads)
    if backend == "pyav":
        return PyAVDecoder(threads)
    raise ValueError(f"unknown video backend {backend!r} (expected one of {', '.join(BACKENDS)})")
