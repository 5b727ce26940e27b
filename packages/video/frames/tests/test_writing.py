from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest

from abduct_video import write_video


def _ramp(count: int = 20, size: int = 32) -> np.ndarray:
    frames = np.zeros((count, size, size, 3), np.uint8)
    for i in range(count):
        frames[i, :, :, 0] = i * 10  # red grows: each frame tells its index
        frames[i, :, :, 2] = 200 - i * 5
    return frames


@pytest.mark.parametrize("suffix", [".mp4", ".mkv", ".webm"])
def test_write_video_round_trips_through_pyav(tmp_path: Path, suffix: str) -> None:
    frames = _ramp()
    path = write_video(tmp_path / f"clip{suffix}", frames, fps=10)
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert float(stream.average_rate) == pytest.approx(10)
        decoded = np.stack([f.to_ndarray(format="rgb24") for f in container.decode(stream)])
    assert decoded.shape == frames.shape
    assert np.abs(decoded.astype(int) - frames).mean() < 4


def test_write_video_refuses_bad_frames(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="even"):
        write_video(tmp_path / "odd.mp4", np.zeros((2, 31, 32, 3), np.uint8), fps=5)
    with pytest.raises(ValueError, match="uint8"):
        write_video(tmp_path / "float.mp4", np.zeros((2, 32, 32, 3), np.float32), fps=5)
    with pytest.raises(ValueError, match="no frames"):
        write_video(tmp_path / "empty.mp4", np.zeros((0, 32, 32, 3), np.uint8), fps=5)
    assert not list(tmp_path.iterdir())
