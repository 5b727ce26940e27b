"""What a video file holds, read from its packets (no decoding): frame times, duration, size.

The packets' own timestamps are the frame clock for both backends: a container's frame
count and average rate can lie (decord trusts the count, and a clip that over-reports it
makes ``get_batch`` spin forever past the real end), while the packets list exactly the
frames there are, at the times they are shown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from abduct_video.errors import VideoError


@dataclass(frozen=True)
class VideoInfo:
    """One video stream: frame presentation times in seconds from the first frame (sorted),
    the raw timestamps they come from (stream time base), keyframe timestamps, and the size."""

    frame_starts: np.ndarray
    frame_pts: np.ndarray
    keyframe_pts: np.ndarray
    duration: float
    height: int
    width: int

    @property
    def frame_count(self) -> int:
        return len(self.frame_starts)


def check_readable(path: str) -> None:
    """VideoError for a path that is missing, a folder, not a regular file (a FIFO or a device
    would block a decoder forever) or empty, before any decoder sees it."""
    if not os.path.exists(path):
        raise VideoError(path, "video file not found")
    if os.path.isdir(path):
        raise VideoError(path, "is a folder, not a video file")
    if not os.path.isfile(path):
        raise VideoError(path, "is not a regular file (a device, FIFO or socket)")
    if os.path.getsize(path) == 0:
        raise VideoError(path, "video file is empty (0 bytes)")


_IMAGE_FORMATS = {"image2", "gif", "webp", "apng"}  # what ffmpeg opens as a one-frame "video"


def probe(path: str) -> VideoInfo:
    """Read in a decoding worker, under its time limit (``FrameSampler.probe``): a regular file
    can still stall the demuxer (an ffconcat list naming a FIFO, for one)."""
    import av

    check_readable(path)
    try:
        with av.open(path) as container:
            if not container.streams.video:
                raise VideoError(path, "has no video stream")
            if container.format.name in _IMAGE_FORMATS or container.format.name.endswith("_pipe"):
                raise VideoError(path, f"is an image ({container.format.name}), not a video")
            stream = container.streams.video[0]
            height, width = stream.codec_context.height, stream.codec_context.width
            time_base = stream.time_base
            pts, ends, keys = [], [], []
            for packet in container.demux(stream):
                if packet.pts is None or packet.size == 0:  # flush packets carry no frame
                    continue
                pts.append(packet.pts)
                ends.append(packet.pts + (packet.duration or 0))
                if packet.is_keyframe:
                    keys.append(packet.pts)
    except VideoError:
        raise
    except (av.error.FFmpegError, UnicodeDecodeError, ValueError) as error:
        raise VideoError(path, f"cannot be read as a video ({error})") from None
    if not pts or time_base is None:
        raise VideoError(path, "has no video frames")
    if not width or not height:
        raise VideoError(path, "video stream has no frame size (damaged header)")
    order = np.argsort(pts, kind="stable")
    frame_pts = np.asarray(pts, dtype=np.int64)[order]
    base = float(time_base)
    starts = (frame_pts - frame_pts[0]) * base
    last_end = max(ends) * base - frame_pts[0] * base
    if last_end <= starts[-1]:  # no packet durations: extend the last frame by the typical gap
        gaps = np.diff(starts)
        last_end = starts[-1] + (float(np.median(gaps)) if len(gaps) else 0.0)
    return VideoInfo(
        frame_starts=starts,
        frame_pts=frame_pts,
        keyframe_pts=np.unique(np.asarray(keys or [pts[0]], dtype=np.int64)),
        duration=float(last_end),
        height=int(height),
        width=int(width),
    )
