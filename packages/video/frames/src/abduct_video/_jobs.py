"""One decoding job: a video and its spans in, one frame array per span out.

This is what a worker process runs. It probes the video, clips the spans to its length,
turns each span into frame indices, reads all of them in one sorted, de-duplicated batch
(one pass through the file, no back-and-forth seeks), and hands each span its frames.
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from abduct_video._decoders import DecordCannotCopy, DecordDecoder, PyAVDecoder, make_decoder
from abduct_video._probe import VideoInfo, check_readable, probe
from abduct_video._settings import SamplingSettings, frame_indices, span_times
from abduct_video.errors import VideoError

# A span may end this far past the last frame without counting as clipped: annotation
# times are rounded, and a span ending exactly at the end is not past it.
END_TOLERANCE = 1e-3


@dataclass(frozen=True)
class Job:
    path: str
    spans: tuple[tuple[float, float], ...]
    settings: SamplingSettings
    backend: str


@dataclass(frozen=True)
class JobResult:
    frames: list[np.ndarray]
    clipped: list[bool]
    duration: float
    note: str | None = None  # set when the video was read another way than asked (a fallback)
    info: VideoInfo | None = None  # a probe job's answer (a job without spans)


@dataclass(frozen=True)
class Decoded:
    """A job's distinct frames (``batch``) and, per span, the rows of ``batch`` it shows."""

    batch: np.ndarray
    rows: list[np.ndarray]
    clipped: list[bool]
    duration: float
    note: str | None = None
    info: VideoInfo | None = None

    def span_shapes(self) -> list[tuple[int, ...]]:
        return [(len(rows), *self.batch.shape[1:]) for rows in self.rows]

    def result(self) -> JobResult:
        return JobResult([self.batch[rows] for rows in self.rows], self.clipped, self.duration, self.note, self.info)


def plan(info: VideoInfo, spans: tuple[tuple[float, float], ...],
         settings: SamplingSettings) -> tuple[list[np.ndarray], list[bool]]:
    """Frame indices for each span, and whether the span reached past the end."""
    indices, clipped = [], []
    for start, end in spans:
        clipped.append(math.isfinite(end) and end > info.duration + END_TOLERANCE)  # inf: the whole video
        end = min(end, info.duration)
        start = min(start, end)
        indices.append(frame_indices(span_times(settings, start, end), info.frame_starts))
    return indices, clipped


class JobRunner:
    """Runs jobs in this process, keeping probes and open readers of recent videos."""

    def __init__(self, backend: str, threads: int = 1) -> None:
        self.decoders: dict[str, DecordDecoder | PyAVDecoder] = {}
        self.threads = threads
        self.probes: OrderedDict[tuple[object, ...], VideoInfo] = OrderedDict()
        make_decoder(backend)  # refuse an unknown backend now, not at the first job

    def _decoder(self, backend: str) -> DecordDecoder | PyAVDecoder:
        if backend not in self.decoders:
            self.decoders[backend] = make_decoder(backend, self.threads)
        return self.decoders[backend]

    def _probe(self, path: str) -> tuple[tuple[object, ...], VideoInfo]:
        check_readable(path)
        st = os.stat(path)
        key: tuple[object, ...] = (path, st.st_size, st.st_mtime_ns)
        info = self.probes.pop(key, None) or probe(path)
        self.probes[key] = info
        while len(self.probes) > 64:
            self.probes.popitem(last=False)
        return key, info

    def read(self, job: Job) -> Decoded:
        """The job's frames as one batch of distinct frames, and which rows each span takes."""
        key, info = self._probe(job.path)
        indices, clipped = plan(info, job.spans, job.settings)
        wanted = np.unique(np.concatenate(indices)) if indices else np.zeros(0, np.int64)
        if not len(wanted):  # a probe job: the video's facts, no pixels
            return Decoded(np.zeros((0, 0, 0, 3), np.uint8), [], clipped, info.duration,
                           info=None if job.spans else info)
        size = job.settings.output_size(info.height, info.width)
        note = None
        try:
            batch = self._decoder(job.backend).read(job.path, key, info, wanted, size)
        except DecordCannotCopy:
            batch = self._decoder("pyav").read(job.path, key, info, wanted, size)
        except VideoError as decord_error:
            # PyAV has already read the file's packets (the probe); where decord gives up on a
            # damaged stretch, PyAV, matching frames by timestamp, often reads what is there.
            if job.backend != "decord":
                raise
            try:
                batch = self._decoder("pyav").read(job.path, key, info, wanted, size)
            except VideoError:
                raise decord_error from None
            note = f"{decord_error.reason}; read with PyAV instead"
        rows = [np.searchsorted(wanted, span) for span in indices]
        return Decoded(batch, rows, clipped, info.duration, note)

    def run(self, job: Job) -> JobResult:
        return self.read(job).result()
