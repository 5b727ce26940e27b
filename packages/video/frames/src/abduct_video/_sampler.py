"""FrameSampler: (video, time spans) in, one uint8 ``[T, H, W, 3]`` array per span out."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from abduct import VisualInput
from abduct.kit import ContentKeys, progress
from abduct_video._cache import Entry, FrameCache
from abduct_video._decoders import BACKENDS
from abduct_video._jobs import Job, JobResult, JobRunner
from abduct_video._pool import WorkerPool
from abduct_video._probe import VideoInfo, check_readable
from abduct_video._settings import SamplingSettings
from abduct_video.errors import DecoderFallbackWarning, SpanClippedWarning

Span = tuple[float, float]
Request = tuple[str | Path, Sequence[Span]]
WHOLE_VIDEO: Span = (0.0, math.inf)


class FrameSampler:
    """Samples frames from video time spans.

    - ``backend``: ``"decord"`` (fast; x86-64 wheels only) or ``"pyav"`` (everywhere; the
      same frames within codec tolerance);
    - ``workers``: decoding processes (0 decodes in this process, without the time limit:
      only for files you trust; every abduct command and model decodes in workers);
    - ``timeout``: seconds one video may take, probe included, before its worker is killed
      (then PyAV is tried after decord, and a video that hangs both is a VideoError, never a
      hung run);
    - ``cache_dir``: where decoded frames are kept between runs (under ``frames/``); None for
      no cache. ``abduct.kit.default_cache_dir()`` shares abduct's cache (``$ABDUCT_CACHE_DIR``);
    - ``recycle_after``: jobs after which a worker process is replaced (None: never);
    - ``threads``: decoder threads per worker; ``quiet``: no progress bar (the default, as
      the caller's own loop usually shows one).

    Spans past a video's end are clipped to its last frame, with one SpanClippedWarning per
    video. A video decord fails on (an error, or a hang or crash of its worker) is read with
    PyAV instead, with one DecoderFallbackWarning; a VideoError only if PyAV fails too.
    Use as a context manager, or call :meth:`close`, to stop the workers promptly.
    """

    def __init__(self, settings: SamplingSettings | None = None, *, backend: str = "decord", workers: int = 2,
                 timeout: float = 120.0, cache_dir: str | Path | None = None, recycle_after: int | None = 200,
                 threads: int = 1, quiet: bool = True) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown video backend {backend!r} (expected one of {', '.join(BACKENDS)})")
        if workers < 0:
            raise ValueError("workers must be 0 or more")
        if backend == "decord":
            _require_decord()
        self.settings = settings or SamplingSettings()
        self.backend, self.workers, self.timeout, self.quiet = backend, workers, timeout, quiet
        self.cache = None if cache_dir is None else FrameCache(cache_dir, self.settings, backend)
        self._keys = ContentKeys()
        self._warned: set[str] = set()
        self._fell_back: set[str] = set()
        self._local = JobRunner(backend, threads) if workers == 0 else None
        self._pool = None if workers == 0 else WorkerPool(
            workers, backend, timeout=timeout, recycle_after=recycle_after, threads=threads)
        self.cache_hits = 0
        self.decoded_spans = 0

    def __enter__(self) -> FrameSampler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()

    # -- public reading -------------------------------------------------------------------

    def sample(self, path: str | Path, spans: Sequence[Span]) -> list[np.ndarray]:
        """One frame array per span of ``path``, in order."""
        return self.sample_many([(path, spans)])[0]

    def sample_many(self, requests: Iterable[Request]) -> list[list[np.ndarray]]:
        """:meth:`sample` for many (video, spans) requests: each video is read once, in one batch,
        and different videos are decoded side by side in the workers."""
        wanted = [(str(path), [(float(s), float(e)) for s, e in spans]) for path, spans in requests]
        found: dict[tuple[str, Span], Entry] = {}
        todo: dict[str, list[Span]] = {}
        for path, spans in wanted:
            check_readable(path)  # missing and empty files fail here, before any worker starts
            for span in spans:
                if (path, span) in found or span in todo.get(path, ()):
                    continue
                entry = self._cached(path, span)
                if entry is None:
                    todo.setdefault(path, []).append(span)
                else:
                    found[path, span] = entry
                    self.cache_hits += 1
        jobs = [Job(path, tuple(spans), self.settings, self.backend) for path, spans in todo.items()]
        for job, result in progress(self._run(jobs), desc="decoding videos", total=len(jobs), quiet=self.quiet,
                                    unit="video"):
            for span, frames, clipped in zip(job.spans, result.frames, result.clipped):
                found[job.path, span] = entry = (frames, clipped, result.duration)
                if self.cache is not None:
                    self.cache.put(self._keys.file(job.path), span, entry)
            self.decoded_spans += len(job.spans)
            if result.note is not None and job.path not in self._fell_back:
                self._fell_back.add(job.path)
                warnings.warn(f"{job.path}: {result.note}", DecoderFallbackWarning, stacklevel=3)
        for path, spans in wanted:
            self._warn_clipped(path, [(span, found[path, span]) for span in spans])
        return [[found[path, span][0] for span in spans] for path, spans in wanted]

    def probe(self, path: str | Path) -> VideoInfo:
        """What ``path`` holds (frame times, duration, size), read by a worker under the time limit."""
        path = str(path)
        check_readable(path)
        ((_, result),) = self._run([Job(path, (), self.settings, self.backend)])
        assert result.info is not None  # a job without spans always answers with the probe
        return result.info

    def frames(self, visual: VisualInput) -> list[np.ndarray]:
        """The frames of ``visual``'s spans, then of each related input's, in order (at most
        ``settings.max_spans`` of them). A video input without spans is read whole, as one span."""
        return self.frames_many([visual])[0]

    def frames_many(self, visuals: Sequence[VisualInput]) -> list[list[np.ndarray]]:
        """:meth:`frames` for many inputs, decoded together."""
        plans = [self._spans_of(visual) for visual in visuals]
        flat = [(path, [span]) for plan in plans for path, span in plan]
        arrays = iter(self.sample_many(flat))
        return [[next(arrays)[0] for _ in plan] for plan in plans]

    # -- internals ------------------------------------------------------------------------

    def _spans_of(self, visual: VisualInput) -> list[tuple[str, Span]]:
        found: list[tuple[str, Span]] = []

        def walk(item: VisualInput) -> None:
            if item.kind == "video" and item.media is not None:
                found.extend((item.media, span) for span in (item.spans or (WHOLE_VIDEO,)))
            for other in item.related:
                walk(other)

        walk(visual)
        limit = self.settings.max_spans
        return found if limit is None else found[:limit]

    def _cached(self, path: str, span: Span) -> Entry | None:
        if self.cache is None:
            return None
        return self.cache.get(self._keys.file(path), span)

    def _run(self, jobs: list[Job]) -> Iterable[tuple[Job, JobResult]]:
        if self._local is not None:
            for job in jobs:
                yield job, self._local.run(job)
            return
        assert self._pool is not None
        if jobs:
            for position, result in self._pool.run(jobs):
                yield jobs[position], result

    def _warn_clipped(self, path: str, entries: list[tuple[Span, Entry]]) -> None:
        clipped = [span for span, (_, was_clipped, _) in entries if was_clipped]
        if not clipped or path in self._warned:
            return
        self._warned.add(path)
        duration = entries[0][1][2]
        first = clipped[0]
        warnings.warn(
            f"{path}: {len(clipped)} time span(s) end past the video's end ({duration:.2f} s), e.g. "
            f"{first[0]:g}-{first[1]:g} s; clipped to its last frame (warned once per video)",
            SpanClippedWarning, stacklevel=3,
        )


def _require_decord() -> Any:
    try:
        import decord  # type: ignore[import-untyped]
    except ImportError:
        from abduct import AbductError

        raise AbductError("backend 'decord' needs decord (`pip install decord`; there are wheels for x86-64 "
                          "Linux and Windows only); use backend 'pyav' elsewhere") from None
    return decord
