from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from abduct_video import FrameSampler, SamplingSettings, VideoError, _pool
from abduct_video.testing import frame_numbers


def test_workers_give_what_this_process_gives(videos: dict[str, Path]) -> None:
    requests = [(videos[name], [(0.0, 0.9), (0.4, 1.7)]) for name in ("moving", "counter", "moving_webm", "gapped")]
    with FrameSampler(workers=0) as local, FrameSampler(workers=2) as pooled:
        expected, got = local.sample_many(requests), pooled.sample_many(requests)
    for a, b in zip(expected, got):
        assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_workers_are_replaced_after_a_number_of_jobs(videos: dict[str, Path]) -> None:
    """Replacing workers bounds whatever memory the native decoders keep (see the README)."""
    with FrameSampler(SamplingSettings(frames_per_span=1), workers=1, recycle_after=2) as sampler:
        for second in range(5):
            assert frame_numbers(sampler.sample(videos["counter"], [(second / 2, second / 2)])[0]) == [second * 5]
        assert sampler._pool is not None and sampler._pool.started == 3  # jobs 1-2, 3-4, 5


def test_no_shared_file_is_left_and_arrays_are_the_callers(videos: dict[str, Path], fifo: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Frames travel through shared-memory files whose names go as soon as a worker is up (no
    file is left behind, also when jobs fail or hang), and the arrays handed back are the
    caller's own writable arrays."""
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setattr(_pool, "SHARED_DIR", str(shared))
    with FrameSampler(SamplingSettings(frames_per_span=2), workers=2, timeout=4.0) as sampler:
        first, second = sampler.sample_many([(videos["counter"], [(0.0, 1.0)]), (videos["moving"], [(0.0, 1.0)])])
        assert not list(shared.iterdir())
        first[0][...] = 0
        assert first[0].flags.writeable and int(first[0].sum()) == 0
        with pytest.raises(VideoError):
            sampler.sample_many([(videos["counter"], [(0.0, 1.0)]), (fifo, [(0.0, 1.0)]), (videos["junk"], [(0, 1)])])
        assert not list(shared.iterdir())
        again = sampler.sample(videos["counter"], [(0.0, 1.0)])[0]
        assert frame_numbers(again) == [2, 7]


def test_ctrl_c_is_the_callers_not_a_traceback_from_each_worker(videos: dict[str, Path], tmp_path: Path) -> None:
    """Ctrl-C in a terminal signals the whole process group: a worker in the middle of a video
    printed a KeyboardInterrupt traceback; it leaves Ctrl-C to the caller, which stops it."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    script = textwrap.dedent(f"""
        import signal, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a background job ignores it)
        from abduct_video import FrameSampler, SamplingSettings

        requests = [({str(videos["moving"])!r}, [(0.0, 2.0)]), ({str(videos["counter"])!r}, [(0.0, 3.0)])] * 4
        with FrameSampler(SamplingSettings(frames_per_span=16), workers=1) as sampler:
            sampler.sample_many(requests)
            print("decoding", flush=True)
            try:
                while True:
                    sampler.sample_many(requests)
            except KeyboardInterrupt:
                sys.exit(130)
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    assert process.stdout is not None and process.stdout.readline() == "decoding\n"
    time.sleep(1.0)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and "Traceback" not in err, err


def test_a_worker_starting_after_its_parent_cleaned_up_leaves_quietly(tmp_path: Path) -> None:
    """The race of a Ctrl-C while a worker starts: its shared-memory areas are gone, so it exits 0
    with nothing on stderr, not a FileNotFoundError traceback under the parent's last line."""
    import socket
    import subprocess
    import sys

    ours, theirs = socket.socketpair()
    with ours, theirs:
        done = subprocess.run([sys.executable, "-m", "abduct_video._worker", str(theirs.fileno()), "pyav", "1",
                               str(tmp_path / "gone.frames")], pass_fds=(theirs.fileno(),), capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
