"""Worker processes that decode, each job under a time limit.

A decoder stuck in native code cannot be interrupted from Python (decord holds the GIL while
it spins), so every job runs in a separate process and one that is not back within
``timeout`` seconds is killed and replaced; its video is reported as a VideoError. Workers
are also replaced after ``recycle_after`` jobs, so memory a native library never gives
back cannot pile up over a long run.

Each worker holds two jobs at a time, so it decodes the next while the parent copies out
the last one's frames.

Workers are forked where the platform allows it (Linux): ``spawn`` and ``forkserver``
re-import the caller's main script in every worker, which breaks any script without an
``if __name__ == "__main__"`` guard. Forking is safe here because the parent never decodes
while it has workers (no decoder threads to copy mid-operation) and a child imports decord
and PyAV only after the fork. macOS and Windows use ``spawn``.
"""

from __future__ import annotations

import mmap
import multiprocessing
import sys
import time
import weakref
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from abduct_video._jobs import Decoded, Job, JobResult, JobRunner
from abduct_video.errors import VideoError

# Frames come back through memory the parent maps before forking each worker (one copy in,
# one out) rather than pickled through the pipe (four copies, about 200 MB/s on a busy
# 2-core machine: as slow as decoding itself). Two areas per worker, one per job in flight;
# pages are only committed once written.
ARENA_BYTES = 256 << 20
IN_FLIGHT = 2


def _to_arena(arena: mmap.mmap, decoded: Decoded) -> tuple[Any, ...] | None:
    """Write each span's frames into ``arena``; their shapes, or None when they do not fit."""
    shapes = decoded.span_shapes()
    if sum(int(np.prod(shape)) for shape in shapes) > len(arena):
        return None
    offset = 0
    for rows, shape in zip(decoded.rows, shapes):
        size = int(np.prod(shape))
        np.take(decoded.batch, rows, axis=0, out=np.frombuffer(arena, np.uint8, size, offset).reshape(shape))
        offset += size
    return shapes, decoded.clipped, decoded.duration


def _from_arena(arena: mmap.mmap, shapes: list[tuple[int, ...]], clipped: list[bool], duration: float) -> JobResult:
    frames, offset = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        frames.append(np.frombuffer(arena, np.uint8, size, offset).reshape(shape).copy())
        offset += size
    return JobResult(frames, clipped, duration)


def _serve(conn: Connection, backend: str, threads: int, arenas: list[mmap.mmap]) -> None:
    runner = JobRunner(backend, threads)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        job_id, slot, job = message
        try:
            decoded = runner.read(job)
            shared = _to_arena(arenas[slot], decoded) if arenas else None
            reply: tuple[Any, ...] = (job_id, "arena", shared) if shared else (job_id, "ok", decoded.result())
        except VideoError as error:
            reply = (job_id, "error", error.reason)
        except Exception as error:  # any decoder failure is this video's problem, not the pool's
            reply = (job_id, "error", f"decoding failed ({type(error).__name__}: {error})")
        conn.send(reply)


@dataclass
class _Worker:
    process: Any
    conn: Connection
    arenas: list[mmap.mmap]
    done: int = 0
    jobs: deque[tuple[int, int]] = field(default_factory=deque)  # (job position, arena slot), oldest first
    deadline: float = 0.0  # when the oldest job in flight counts as hung

    def free_slot(self) -> int:
        taken = {slot for _, slot in self.jobs}
        return next(slot for slot in range(IN_FLIGHT) if slot not in taken)

    def stop(self, *, kill: bool) -> None:
        if not kill:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                kill = True
        if kill or (self.process.join(2) or self.process.is_alive()):
            self.process.kill()
        self.process.join(5)
        self.conn.close()
        for arena in self.arenas:
            arena.close()


def _stop_all(workers: list[_Worker]) -> None:
    for worker in workers:
        worker.stop(kill=bool(worker.jobs))
    workers.clear()


class WorkerPool:
    def __init__(self, workers: int, backend: str, *, timeout: float, recycle_after: int | None,
                 threads: int = 1) -> None:
        if workers < 1:
            raise ValueError("a worker pool needs at least one worker")
        self.size, self.backend, self.timeout = workers, backend, timeout
        self.recycle_after, self.threads = recycle_after, threads
        fork = sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()
        self.context: Any = multiprocessing.get_context("fork" if fork else "spawn")
        self.workers: list[_Worker] = []
        self.started = 0  # processes started over the pool's life (tests watch recycling)
        self._finalizer = weakref.finalize(self, _stop_all, self.workers)

    def _start(self) -> _Worker:
        parent, child = self.context.Pipe()
        # an anonymous shared mapping reaches only forked children; spawned ones use the pipe
        forked = self.context.get_start_method() == "fork"
        arenas = [mmap.mmap(-1, ARENA_BYTES) for _ in range(IN_FLIGHT)] if forked else []
        process = self.context.Process(target=_serve, args=(child, self.backend, self.threads, arenas), daemon=True,
                                       name="abduct-video-decoder")
        process.start()
        child.close()
        self.started += 1
        return _Worker(process, parent, arenas)

    def _replace(self, worker: _Worker, *, kill: bool) -> None:
        worker.stop(kill=kill)
        self.workers[self.workers.index(worker)] = self._start()

    def close(self) -> None:
        _stop_all(self.workers)

    def run(self, jobs: Sequence[Job]) -> Iterator[tuple[int, JobResult]]:
        """Yield ``(job position, result)`` as jobs finish. The first failing video stops new
        jobs; those under way finish, then its VideoError is raised."""
        while len(self.workers) < min(self.size, len(jobs)):
            self.workers.append(self._start())
        pending = deque(range(len(jobs)))
        failure: VideoError | None = None

        def fail(worker: _Worker, reason: str) -> None:
            nonlocal failure
            position, _ = worker.jobs.popleft()
            failure = failure or VideoError(jobs[position].path, reason)
            worker.jobs.clear()  # a job queued behind it goes with the process
            self._replace(worker, kill=True)

        try:
            while True:
                # spread jobs over the workers first, then give each a second one to start on
                for depth in range(1, IN_FLIGHT + 1):
                    for worker in self.workers:
                        if len(worker.jobs) < depth and pending and failure is None:
                            if not worker.jobs:
                                worker.deadline = time.monotonic() + self.timeout
                            position, slot = pending.popleft(), worker.free_slot()
                            worker.jobs.append((position, slot))
                            worker.conn.send((position, slot, jobs[position]))
                busy = [w for w in self.workers if w.jobs]
                if not busy:
                    break
                left = max(0.0, min(w.deadline for w in busy) - time.monotonic())
                ready = set(wait([w.conn for w in busy], timeout=left))
                for worker in busy:
                    if worker.conn in ready:
                        try:
                            _, status, payload = worker.conn.recv()
                        except (EOFError, OSError):
                            worker.process.join(1)
                            fail(worker, f"the decoder process died while reading it (exit code "
                                         f"{worker.process.exitcode})")
                            continue
                        position, slot = worker.jobs.popleft()
                        worker.done += 1
                        worker.deadline = time.monotonic() + self.timeout  # the next job's clock
                        if status == "arena":
                            result = _from_arena(worker.arenas[slot], *payload)
                        elif status == "ok":
                            result = payload
                        else:
                            failure = failure or VideoError(jobs[position].path, payload)
                        if not worker.jobs and self.recycle_after and worker.done >= self.recycle_after:
                            self._replace(worker, kill=False)
                        if status in ("arena", "ok"):
                            yield position, result
                    elif time.monotonic() >= worker.deadline:
                        fail(worker, f"decoding did not finish within {self.timeout:g} s; the file may be "
                                     "damaged (a decoder can hang on it)")
            if failure is not None:
                raise failure
        finally:
            # Left early (an error, or the caller stopped reading): a worker still busy would
            # answer a job nobody waits for, so replace it.
            for worker in [w for w in self.workers if w.jobs]:
                worker.jobs.clear()
                self._replace(worker, kill=True)
