"""The tiny videos every test reads, made once per session (see ``abduct_video.testing``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from abduct_video import write_video
from abduct_video.testing import (
    counter_frames,
    moving_frames,
    write_gapped_video,
    write_overlisted_video,
    write_stalling_video,
)


@pytest.fixture(scope="session")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("videos")
    made = {
        "counter": write_video(root / "counter.mp4", counter_frames(30), fps=10),  # 3 s
        "counter_mkv": write_video(root / "counter.mkv", counter_frames(20), fps=10),  # 2 s
        "moving": write_video(root / "moving.mp4", moving_frames(25), fps=12.5),  # 2 s
        "moving_webm": write_video(root / "moving.webm", moving_frames(25), fps=12.5),
        "gapped": write_gapped_video(root / "gapped.mp4"),
        "width48": write_video(root / "width48.mp4", moving_frames(10, width=48), fps=10),
        "overlisted": write_overlisted_video(root / "overlisted.mp4"),  # lists 30 frames, holds 20
    }
    (root / "empty.mp4").write_bytes(b"")
    made["empty"] = root / "empty.mp4"
    (root / "junk.mp4").write_bytes(np.random.default_rng(1).integers(0, 256, 4000, dtype=np.uint8).tobytes())
    made["junk"] = root / "junk.mp4"
    full = made["counter"].read_bytes()
    (root / "truncated.mp4").write_bytes(full[: len(full) // 3])
    made["truncated"] = root / "truncated.mp4"
    return made


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    """A named pipe posing as a video (refused before any decoder opens it)."""
    path = tmp_path / "stuck.mp4"
    os.mkfifo(path)
    return path


@pytest.fixture
def stalling(tmp_path: Path) -> Path:
    """A regular file that hangs the decoder (``write_stalling_video``), as a hostile one can."""
    return write_stalling_video(tmp_path / "stalling.mp4")
