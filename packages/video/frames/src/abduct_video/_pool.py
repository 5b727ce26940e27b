"""Worker processes that decode, each job under a time limit.

A decoder stuck in native code cannot be interrupted from Python (decord holds the GIL while
it spins), so every job runs in a separate process and one that is not back within
``timeout`` seconds is killed and replaced; its video is reported as a VideoError. Workers
are also replaced after ``recycle_after`` jobs, so memory a native library never gives
back cannot pile up over a long run.

Workers are forked where the platform allows it (Linux): ``spawn`` and ``forkserver``
re-import the caller's main script in every worker, which breaks any script without an
``if __name__ == "__main__"`` guard. Forking is safe here because the parent never decodes
while it has workers (no decoder threads to copy mid-operation) and a child imports decord
and PyAV only after the fork. macOS and Windows use ``spawn``.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
import weakref
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from abduct_video._jobs import Job, JobResult, JobRunner
from abduct_video.errors import VideoError


def _serve(conn: Connection, backend: str, threads: int) -> None:
    runner = JobRunner(backend, threads)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        job_id, job = message
        try:
            reply: tuple[Any, ...] = (job_id, "ok", runner.run(job))
        except VideoError as error:
            reply = (job_id, "error", error.reason)
        except Exception as error:  # any decoder failure is this video's problem, not the pool's
            reply = (job_id, "error", f"decoding failed ({type(error).__name__}: {error})")
        conn.send(reply)


@dataclass
class _Worker:
    process: Any
    conn: Connection
    done: int = 0
    job: int | None = None
    deadline: float = 0.0

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


def _stop_all(workers: list[_Worker]) -> None:
    for worker in workers:
        worker.stop(kill=worker.job is not None)
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
        process = self.context.Process(target=_serve, args=(child, self.backend, self.threads), daemon=True,
                                       name="abduct-video-decoder")
        process.start()
        child.close()
        self.started += 1
        return _Worker(process, parent)

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
        try:
            while True:
                for worker in self.workers:
                    if worker.job is None and pending and failure is None:
                        worker.job = pending.popleft()
                        worker.deadline = time.monotonic() + self.timeout
                        worker.conn.send((worker.job, jobs[worker.job]))
                busy = [w for w in self.workers if w.job is not None]
                if not busy:
                    break
                left = max(0.0, min(w.deadline for w in busy) - time.monotonic())
                ready = set(wait([w.conn for w in busy], timeout=left))
                for worker in busy:
                    position = worker.job
                    assert position is not None
                    path = jobs[position].path
                    if worker.conn in ready:
                        worker.job = None
                        try:
                            _, status, payload = worker.conn.recv()
                        except (EOFError, OSError):
                            worker.process.join(1)
                            code = worker.process.exitcode
                            failure = failure or VideoError(
                                path, f"the decoder process died while reading it (exit code {code})")
                            self._replace(worker, kill=True)
                            continue
                        worker.done += 1
                        if status == "ok":
                            yield position, payload
                        else:
                            failure = failure or VideoError(path, payload)
                        if self.recycle_after and worker.done >= self.recycle_after:
                            self._replace(worker, kill=False)
                    elif time.monotonic() >= worker.deadline:
                        failure = failure or VideoError(
                            path, f"decoding did not finish within {self.timeout:g} s; the file may be "
                                  "damaged (a decoder can hang on it)")
                        worker.job = None
                        self._replace(worker, kill=True)
            if failure is not None:
                raise failure
        finally:
            # Left early (an error, or the caller stopped reading): a worker still busy would
            # answer a job nobody waits for, so replace it.
            for worker in [w for w in self.workers if w.job is not None]:
                worker.job = None
                self._replace(worker, kill=True)
