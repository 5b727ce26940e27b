"""Video frame sampling: frames per second delivered by abduct-video's FrameSampler against a
straightforward PyAV decode-and-seek loop and against raw decord ``get_batch`` on the same
frame indices; then with the frame cache on; then memory over 1,000 consecutive clips.
All ratios come from one run of this script.

    python benchmarks/video_sampling.py [--videos 6] [--seconds 20] [--width 320] [--height 240]
        [--clips 96] [--frames 8] [--workers 2] [--repeat 5] [--memory-clips 1000] [--json]

* corpus: ``--videos`` synthetic H.264 mp4 files (moving, textured content; libx264 defaults,
  so a keyframe every 250 frames, as in much real footage), written once to a temp folder;
* clips: ``--clips`` random (video, span of 2-5 s) requests, ``--frames`` uniform frames each;
  every method decodes exactly the frame indices the sampler's planner picks;
* ``pyav loop``: open the file, then for each frame seek to its time and decode forward to it;
* ``decord raw``: one open ``VideoReader`` per video (one decoder thread, like each of our
  workers), in this process: ``get_batch`` of each clip's sorted indices, and the reads the
  sampler makes (per batch of 16 clips, one ``get_batch`` per video of the sorted union of
  their indices), with and without the ``seek(0)`` the sampler makes after each read (it
  releases decord's buffered frames, and makes the next read faster too). The sampler's
  overhead (probing, planning, worker round trips) is measured against the very same decord
  calls: batched reads + ``seek(0)``;
* ``ours``: ``FrameSampler(backend="decord", workers=W)``, cache off, ``sample_many`` over
  batches of 16 clips, i.e. what a model's data loop receives; with ``workers=1`` the ratio to
  raw decord is the sampler's overhead, with more workers its parallel speed-up;
* ``ours, cache on``: the same after one pass has filled a fresh cache;
* memory: RSS (this process plus its decoder workers) after 20 warm-up clips and after
  ``--memory-clips`` consecutive clips one at a time (workers never recycled, so any growth
  would show), next to raw decord calling ``get_batch`` the same number of times without the
  ``seek(0)`` release, in a separate process.

Times are the best of ``--repeat`` rounds, each round running every method once in turn
(the machine may be shared). CPU time per frame (this process plus the sampler's workers,
from /proc) is reported too: it does not depend on how busy the machine is, so it is the
steadier measure of the sampler's overhead.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import av
import decord
import numpy as np

from abduct_video import FrameSampler, SamplingSettings, write_video
from abduct_video._jobs import plan
from abduct_video._probe import probe
from abduct_video.testing import moving_frames

BATCH = 16


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as status:
                total += next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return total / 1024


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of other processes (the sampler's workers), from /proc."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


def _worker_pids(sampler: FrameSampler | None) -> list[int]:
    if sampler is None or sampler._pool is None:
        return []
    return [w.process.pid for w in sampler._pool.workers]


def _best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    times, frames = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        frames = fn()
        times.append(time.perf_counter() - start)
    return min(times), frames


def _pyav_loop(clips: list[tuple[str, np.ndarray]], infos: dict[str, object]) -> int:
    count = 0
    for path, indices in clips:
        frame_pts = infos[path].frame_pts  # type: ignore[attr-defined]
        with av.open(path) as container:
            stream = container.streams.video[0]
            for index in indices:
                target = int(frame_pts[index])
                container.seek(target, stream=stream, backward=True)
                for frame in container.decode(stream):
                    if frame.pts is not None and frame.pts >= target:
                        frame.to_ndarray(format="rgb24")
                        count += 1
                        break
    return count


def _decord_per_clip(clips: list[tuple[str, np.ndarray]], readers: dict[str, decord.VideoReader]) -> int:
    count = 0
    for path, indices in clips:
        wanted = np.unique(indices)
        batch = readers[path].get_batch(wanted.tolist()).asnumpy()
        count += len(batch[np.searchsorted(wanted, indices)])
    return count


def _decord_batched(clips: list[tuple[str, np.ndarray]], readers: dict[str, decord.VideoReader],
                    release: bool) -> int:
    """The reads the sampler makes: per batch of clips, one get_batch per video of the sorted
    union of its indices (then, with ``release``, the sampler's ``seek(0)``)."""
    count = 0
    for start in range(0, len(clips), BATCH):
        chunk = clips[start:start + BATCH]
        for path in dict.fromkeys(p for p, _ in chunk):
            own = [ix for p, ix in chunk if p == path]
            wanted = np.unique(np.concatenate(own))
            batch = readers[path].get_batch(wanted.tolist()).asnumpy()
            if release:
                readers[path].seek(0)
            count += sum(len(batch[np.searchsorted(wanted, ix)]) for ix in own)
    return count


def _ours(sampler: FrameSampler, requests: list[tuple[str, list[tuple[float, float]]]]) -> int:
    count = 0
    for start in range(0, len(requests), BATCH):
        for spans in sampler.sample_many(requests[start:start + BATCH]):
            count += sum(len(frames) for frames in spans)
    return count


def _raw_decord_memory(path_clips: list[tuple[str, list[int]]], queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    readers = {path: decord.VideoReader(path, ctx=decord.cpu(0), num_threads=1) for path, _ in path_clips}
    for i, (path, indices) in enumerate(path_clips):
        readers[path].get_batch(indices).asnumpy()
        if i == 19:
            start = _rss_mb([os.getpid()])
    queue.put((start, _rss_mb([os.getpid()])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=240)
    parser.add_argument("--fps", type=float, default=30.0)
    parser.add_argument("--clips", type=int, default=96)
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--memory-clips", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    say = (lambda *_: None) if args.json else print
    report: dict[str, object] = {"clips": args.clips, "frames": args.frames, "workers": args.workers}
    rng = random.Random(args.seed)
    settings = SamplingSettings(frames_per_span=args.frames)

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        paths = []
        count = round(args.seconds * args.fps)
        for v in range(args.videos):
            frames = moving_frames(count, height=args.height, width=args.width, seed=v)
            paths.append(str(write_video(Path(tmp) / f"video{v}.mp4", frames, fps=args.fps)))
        say(f"corpus: {args.videos} videos, {args.seconds:g} s each, {args.width}x{args.height} at "
              f"{args.fps:g} fps (written in {time.perf_counter() - started:.1f} s)")

        infos = {path: probe(path) for path in paths}

        def random_requests(n: int) -> list[tuple[str, list[tuple[float, float]]]]:
            out = []
            for _ in range(n):
                path = rng.choice(paths)
                length = rng.uniform(2.0, 5.0)
                start = rng.uniform(0.0, args.seconds - length)
                out.append((path, [(round(start, 3), round(start + length, 3))]))
            return out

        def indices_of(requests: list[tuple[str, list[tuple[float, float]]]]) -> list[tuple[str, np.ndarray]]:
            return [(path, plan(infos[path], tuple(spans), settings)[0][0]) for path, spans in requests]  # type: ignore[arg-type]

        requests = random_requests(args.clips)
        clips = indices_of(requests)
        readers = {path: decord.VideoReader(path, ctx=decord.cpu(0), num_threads=1) for path in paths}
        with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as cache_dir:
            # never recycled, so their workers' CPU time can be read across the rounds
            samplers = {workers: stack.enter_context(FrameSampler(settings, workers=workers, recycle_after=None))
                        for workers in sorted({1, args.workers})}
            for sampler in samplers.values():
                _ours(sampler, requests[:BATCH])  # start the workers and open the readers
            with FrameSampler(settings, workers=args.workers, cache_dir=cache_dir) as filling:
                _ours(filling, requests)  # fills the cache
            cached = stack.enter_context(FrameSampler(settings, workers=args.workers, cache_dir=cache_dir,
                                                      recycle_after=None))
            methods: dict[str, Callable[[], int]] = {
                "pyav loop (seek + decode per frame)": lambda: _pyav_loop(clips, infos),
                "decord raw, one get_batch per clip": lambda: _decord_per_clip(clips, readers),
                "decord raw, batched reads": lambda: _decord_batched(clips, readers, False),
                "decord raw, batched reads + seek(0)": lambda: _decord_batched(clips, readers, True),
                **{f"ours, decord, {w} worker(s), cache off": (lambda s=s: _ours(s, requests))
                   for w, s in samplers.items()},
                f"ours, cache on (second pass, {args.workers} workers)": lambda: _ours(cached, requests),
            }
            owners = {f"ours, decord, {w} worker(s), cache off": s for w, s in samplers.items()}
            owners[f"ours, cache on (second pass, {args.workers} workers)"] = cached
            # rounds interleave the methods, so a busy spell on a shared machine hits all of them;
            # CPU seconds (this process and the workers) do not depend on the machine's load
            best: dict[str, tuple[float, int]] = {}
            cpu: dict[str, tuple[float, int]] = {}
            for _ in range(args.repeat):
                for name, method in methods.items():
                    pids = _worker_pids(owners.get(name))
                    cpu_start = time.process_time() + _cpu_seconds(pids)
                    seconds, frames = _best(method, 1)
                    cpu_used = time.process_time() + _cpu_seconds(pids) - cpu_start
                    if name not in best or seconds < best[name][0]:
                        best[name] = (seconds, frames)
                    if name not in cpu or cpu_used < cpu[name][0]:
                        cpu[name] = (cpu_used, frames)
        rows = [(name, seconds, frames) for name, (seconds, frames) in best.items()]

        by_name = {name: frames / seconds for name, seconds, frames in rows}
        naive = by_name["pyav loop (seek + decode per frame)"]
        raw = by_name["decord raw, batched reads + seek(0)"]
        say(f"\n{args.clips} clips x {args.frames} frames (uniform), best of {args.repeat}, "
              f"{os.cpu_count()} CPU cores\n")
        cpu_ms = {name: 1000 * used / frames for name, (used, frames) in cpu.items()}
        raw_cpu = cpu_ms["decord raw, batched reads + seek(0)"]
        say(f"{'method':<48} {'frames/s':>10} {'vs pyav loop':>13} {'vs raw same calls':>18} "
              f"{'CPU ms/frame':>13} {'CPU vs raw':>11}")
        for name, seconds, frames in rows:
            rate = frames / seconds
            say(f"{name:<48} {rate:>10.0f} {rate / naive:>12.2f}x {rate / raw:>17.2f}x "
                  f"{cpu_ms[name]:>13.2f} {cpu_ms[name] / raw_cpu:>10.2f}x")
        one = by_name["ours, decord, 1 worker(s), cache off"]
        one_cpu = cpu_ms["ours, decord, 1 worker(s), cache off"]
        report["methods"] = {name: {"frames_per_s": frames / seconds, "cpu_ms_per_frame": cpu_ms[name]}
                             for name, seconds, frames in rows}
        report["overhead_1_worker_wall"] = raw / one - 1
        report["overhead_1_worker_cpu"] = one_cpu / raw_cpu - 1
        say(f"\noverhead of ours (1 worker) over the same decord calls (goal <= +15%): "
              f"{100 * (raw / one - 1):+.1f}% wall time per frame, {100 * (one_cpu / raw_cpu - 1):+.1f}% CPU time "
              f"per frame (this process and the workers)")
        best_ours = by_name[f"ours, decord, {args.workers} worker(s), cache off"]
        report["speedup_vs_pyav_loop"] = best_ours / naive
        say(f"ours ({args.workers} workers) vs pyav loop: {best_ours / naive:.1f}x (goal >= 3x)")

        # memory over consecutive clips
        memory_requests = random_requests(args.memory_clips)
        with FrameSampler(settings, workers=args.workers, recycle_after=None) as sampler:
            def family() -> list[int]:
                assert sampler._pool is not None
                return [os.getpid(), *(w.process.pid for w in sampler._pool.workers)]

            for i, (path, spans) in enumerate(memory_requests):
                sampler.sample(path, spans)
                if i == 19:
                    start_rss = _rss_mb(family())
            end_rss = _rss_mb(family())
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        raw_clips = [(path, np.unique(ix).tolist()) for path, ix in indices_of(memory_requests)]
        process = context.Process(target=_raw_decord_memory, args=(raw_clips, queue))
        process.start()
        raw_start, raw_end = queue.get()
        process.join()
        report["memory_mb"] = {"clips": args.memory_clips, "ours_growth": end_rss - start_rss,
                               "raw_decord_growth": raw_end - raw_start}
        if args.json:
            print(json.dumps(report, indent=2))
        say(f"\nmemory over {args.memory_clips} consecutive clips (RSS after 20 clips -> after all):")
        say(f"  ours ({args.workers} workers, never recycled, parent + workers): "
              f"{start_rss:.0f} MB -> {end_rss:.0f} MB ({end_rss - start_rss:+.0f} MB)")
        say(f"  raw decord get_batch without seek(0), one process: "
              f"{raw_start:.0f} MB -> {raw_end:.0f} MB ({raw_end - raw_start:+.0f} MB)")


if __name__ == "__main__":
    main()
