"""Worker processes that decode, each job under a time limit.

A decoder stuck in native code cannot be interrupted from Python (decord holds the GIL while
it spins), so every job runs in a separate process and one that is not back within
``timeout`` seconds is killed and replaced; decord's jobs are then tried with PyAV, and a
video that hangs both is a VideoError. Workers are also replaced after ``recycle_after``
jobs, so memory a native library never gives back cannot pile up over a long run.

Each worker holds two jobs at a time, so it decodes the next while the parent copies out
the last one's frames. Frames travel through two shared-memory areas per worker, one per
job in flight: files in ``/dev/shm`` that both sides open and the parent unlinks as soon as
the worker is up, so none outlives them. An area grows to the largest result it has
carried (the worker grows it with ``posix_fallocate``, so a full ``/dev/shm`` — Docker's
default is 64 MB — is an error to fall back from, not a bus error later) and is reused, so
its pages are faulted in once: a fresh file per job cost twice the decoder's own CPU time
per frame in page faults. Pickling frames through the pipe costs four copies (about
200 MB/s on a busy 2-core machine: as slow as decoding itself) and is the fallback.

Workers are fresh interpreters (``python -m abduct_video._worker``), never forks: a fork
copies the parent's thread locks mid-operation, and a parent that has used decord itself
(or runs torch) hands its child a decoder that deadlocks on first use. multiprocessing's
``spawn`` would re-run the caller's main script in each worker, which breaks scripts
without an ``if __name__ == "__main__"`` guard; a plain subprocess does not. (Windows, which
cannot pass a socket to a subprocess, uses ``spawn``.)
"""

from __future__ import annotations

import dataclasses
import mmap
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from abduct import AbductError
from abduct_video._jobs import Decoded, Job, JobResult, JobRunner
from abduct_video.errors import VideoError

IN_FLIGHT = 2
STARTUP_SECONDS = 60.0
SHARED_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


class _Area:
    """One shared-memory area: an open file both sides map, grown on demand, never shrunk."""

    def __init__(self, fd: int) -> None:
        self.fd, self.size = fd, 0
        self.mapped: mmap.mmap | None = None

    def view(self, size: int) -> mmap.mmap:
        """The mapping, remapped if the file has grown to ``size`` (by this side or the other)."""
        if self.mapped is None or len(self.mapped) < size:
            if self.mapped is not None:
                self.mapped.close()
            self.mapped, self.size = mmap.mmap(self.fd, size), size
        return self.mapped

    def grow(self, size: int) -> bool:
        if size <= self.size:
            return True
        try:
            os.posix_fallocate(self.fd, 0, size)
        except (OSError, AttributeError):  # no room in /dev/shm, or no posix_fallocate here
            return False
        self.view(size)
        return True

    def close(self) -> None:
        if self.mapped is not None:
            self.mapped.close()
        os.close(self.fd)


def _write_frames(area: _Area, decoded: Decoded) -> tuple[Any, ...] | None:
    """Write each span's frames into ``area``; what the parent needs to read them, or None if
    there is no room."""
    shapes = decoded.span_shapes()
    sizes = [int(np.prod(shape)) for shape in shapes]
    total = sum(sizes)
    if total == 0 or not area.grow(total):
        return None
    mapped, offset = area.view(total), 0
    for rows, shape, size in zip(decoded.rows, shapes, sizes):
        np.take(decoded.batch, rows, axis=0, out=np.frombuffer(mapped, np.uint8, size, offset).reshape(shape))
        offset += size
    return area.size, shapes, decoded.clipped, decoded.duration, decoded.note


def _read_frames(area: _Area, size: int, shapes: list[tuple[int, ...]], clipped: list[bool], duration: float,
                 note: str | None) -> JobResult:
    mapped, frames, offset = area.view(size), [], 0
    for shape in shapes:
        count = int(np.prod(shape))
        frames.append(np.frombuffer(mapped, np.uint8, count, offset).reshape(shape).copy())
        offset += count
    return JobResult(frames, clipped, duration, note)


def _serve(conn: Connection, backend: str, threads: int, areas: list[_Area]) -> None:
    # Ctrl-C is the parent's to handle (it stops its workers), not a traceback from each worker
    # in the middle of a video (a POSIX worker has its own session, out of the terminal's reach)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
            shared = _write_frames(areas[slot], decoded) if areas else None
            reply: tuple[Any, ...] = (job_id, "area", shared) if shared else (job_id, "ok", decoded.result())
        except VideoError as error:
            reply = (job_id, "error", error.reason)
        except Exception as error:  # any decoder failure is this video's problem, not the pool's
            reply = (job_id, "error", f"decoding failed ({type(error).__name__}: {error})")
        conn.send(reply)


class _Child:
    """A worker interpreter, with the part of multiprocessing.Process's interface the pool uses."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pid = popen.pid

    def kill(self) -> None:
        self.popen.kill()

    def join(self, timeout: float | None = None) -> None:
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    @property
    def exitcode(self) -> int | None:
        return self.popen.poll()


@dataclass
class _Worker:
    process: Any
    conn: Connection
    areas: list[_Area]
    done: int = 0
    jobs: deque[tuple[int, int]] = field(default_factory=deque)  # (job position, area slot), oldest first
    deadline: float = 0.0  # when the oldest job in flight counts as hung

    def free_slot(self) -> int:
        taken = {slot for _, slot in self.jobs}
        return next(slot for slot in range(IN_FLIGHT) if slot not in taken)

    def drop_jobs(self) -> list[int]:
        """Forget the jobs in flight; their positions, oldest first."""
        positions = [position for position, _ in self.jobs]
        self.jobs.clear()
        return positions

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
        self.drop_jobs()
        for area in self.areas:
            area.close()


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
        self.workers: list[_Worker] = []
        self.started = 0  # processes started over the pool's life (tests watch recycling)
        self._finalizer = weakref.finalize(self, _stop_all, self.workers)

    def _start(self) -> _Worker:
        self.started += 1
        if os.name != "posix":
            context = multiprocessing.get_context("spawn")
            parent, child = context.Pipe()
            process = context.Process(target=_serve, args=(child, self.backend, self.threads, []), daemon=True,
                                      name="abduct-video-decoder")
            process.start()
            child.close()
            return _Worker(process, parent, [])
        files = [tempfile.mkstemp(prefix="abduct-video-", suffix=".frames", dir=SHARED_DIR) for _ in range(IN_FLIGHT)]
        ours, theirs = socket.socketpair()
        # the worker imports what this process can import, wherever it was found
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        try:
            popen = subprocess.Popen(
                [sys.executable, "-m", "abduct_video._worker", str(theirs.fileno()), self.backend, str(self.threads),
                 *(path for _, path in files)],
                pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL,
                start_new_session=True,  # a terminal's Ctrl-C is the parent's: it stops its workers
            )
            theirs.close()
            worker = _Worker(_Child(popen), Connection(ours.detach()), [_Area(fd) for fd, _ in files])
            try:
                started = worker.conn.poll(STARTUP_SECONDS) and worker.conn.recv() == "ready"
            except (EOFError, OSError):
                started = False
        finally:
            for _, path in files:  # both sides hold the files open now: their names can go
                os.unlink(path)
        if not started:
            worker.stop(kill=True)
            raise AbductError(f"a video decoding worker did not start (exit code {popen.poll()})")
        return worker

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
        jobs = list(jobs)
        pending = deque(range(len(jobs)))
        failure: VideoError | None = None
        notes: dict[int, str] = {}

        def fail(worker: _Worker, reason: str) -> None:
            """The worker's oldest job hung or killed it: try PyAV once after decord, else report."""
            nonlocal failure
            position, *queued = worker.drop_jobs()
            pending.extendleft(reversed(queued))  # a job queued behind it goes with the process
            self._replace(worker, kill=True)
            job = jobs[position]
            if job.backend == "decord" and failure is None:
                notes[position] = f"decord: {reason}; read with PyAV instead"
                jobs[position] = dataclasses.replace(job, backend="pyav")
                pending.appendleft(position)
            else:
                tried = " (with decord, then with PyAV)" if position in notes else ""
                failure = failure or VideoError(
                    job.path, f"{reason}{tried}; the file may be damaged (a decoder can hang or crash on one)")

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
                        if status == "area":
                            result = _read_frames(worker.areas[slot], *payload)
                        elif status == "ok":
                            result = payload
                        else:
                            failure = failure or VideoError(jobs[position].path, payload)
                        if not worker.jobs and self.recycle_after and worker.done >= self.recycle_after:
                            self._replace(worker, kill=False)
                        if status in ("area", "ok"):
                            if position in notes:
                                result = dataclasses.replace(result, note=notes[position])
                            yield position, result
                    elif time.monotonic() >= worker.deadline:
                        fail(worker, f"decoding did not finish within {self.timeout:g} s")
            if failure is not None:
                raise failure
        finally:
            # Left early (an error, or the caller stopped reading): a worker still busy would
            # answer a job nobody waits for, so replace it.
            for worker in [w for w in self.workers if w.jobs]:
                worker.drop_jobs()
                self._replace(worker, kill=True)
