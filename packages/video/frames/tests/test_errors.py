from __future__ import annotations

import time
import warnings
from pathlib import Path

import pytest

from abduct import AbductError
from abduct_video import DecoderFallbackWarning, FrameSampler, SamplingSettings, SpanClippedWarning, VideoError
from abduct_video.testing import frame_numbers

BAD = {
    "missing": "video file not found",
    "empty": "video file is empty (0 bytes)",
    "junk": "cannot be read as a video",
    "truncated": "cannot be read as a video",
}


@pytest.mark.parametrize("workers", [0, 1])
@pytest.mark.parametrize("backend", ["decord", "pyav"])
@pytest.mark.parametrize("which", sorted(BAD))
def test_bad_videos_raise_a_video_error_naming_the_file(videos: dict[str, Path], tmp_path: Path, which: str,
                                                        backend: str, workers: int) -> None:
    path = tmp_path / "absent.mp4" if which == "missing" else videos[which]
    with FrameSampler(backend=backend, workers=workers) as sampler:
        with pytest.raises(VideoError) as caught:
            sampler.sample(path, [(0.0, 1.0)])
    assert isinstance(caught.value, AbductError)
    assert str(caught.value).startswith(f"{path}: ")
    assert BAD[which] in str(caught.value)


def test_a_hung_decode_is_killed_and_reported(videos: dict[str, Path], stalling: Path) -> None:
    settings = SamplingSettings(frames_per_span=1)
    with FrameSampler(settings, workers=1, timeout=4.0) as sampler:
        started = time.monotonic()
        with pytest.raises(VideoError, match=r"did not finish within 4 s \(with decord, then with PyAV\)") as caught:
            sampler.sample_many([(videos["counter"], [(0.0, 0.0)]), (stalling, [(0.0, 1.0)])])
        assert time.monotonic() - started < 40
        assert str(caught.value).startswith(f"{stalling}: ")
        # the stuck worker was replaced: the sampler keeps working
        assert frame_numbers(sampler.sample(videos["counter"], [(1.0, 1.0)])[0]) == [10]


def test_the_first_bad_video_of_many_is_reported(videos: dict[str, Path]) -> None:
    with FrameSampler(workers=2) as sampler:
        with pytest.raises(VideoError, match="junk.mp4"):
            sampler.sample_many([(videos["counter"], [(0.0, 1.0)]), (videos["junk"], [(0.0, 1.0)]),
                                 (videos["moving"], [(0.0, 1.0)])])
        assert len(sampler.sample(videos["moving"], [(0.0, 1.0)])[0]) == 8


def test_unknown_backend() -> None:
    with pytest.raises(ValueError, match="unknown video backend"):
        FrameSampler(backend="opencv")


@pytest.mark.filterwarnings("ignore::abduct_video.SpanClippedWarning")
@pytest.mark.parametrize("workers", [0, 1])
def test_a_container_listing_more_frames_than_it_holds(videos: dict[str, Path], workers: int) -> None:
    """Its header (and decord's len) says 30 frames, 20 decode, junk follows. The probe caps
    indices at the 20 listed packets with data, so spans past the real end get the last real
    frame. Whether decord then trips over the junk depends on how far its decoder thread has
    read ahead (it did in some runs, not in others): when it does, the video is read with PyAV
    and that is said once; either way the frames are the right ones."""
    spans = [(0.0, 1.0), (1.5, 3.0)]
    settings = SamplingSettings(frames_per_span=3)
    with FrameSampler(settings, backend="decord", workers=workers) as sampler, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frames = sampler.sample(videos["overlisted"], spans)
        again = sampler.sample(videos["overlisted"], spans)
    fallbacks = [w for w in caught if w.category is DecoderFallbackWarning]
    assert len(fallbacks) <= 1 and all("read with PyAV instead" in str(w.message) for w in fallbacks)
    assert [frame_numbers(f) for f in frames] == [[1, 5, 8], [15, 17, 19]]
    assert [frame_numbers(f) for f in again] == [[1, 5, 8], [15, 17, 19]]
    with FrameSampler(settings, backend="pyav", workers=workers) as sampler, pytest.warns(SpanClippedWarning):
        assert [frame_numbers(f) for f in sampler.sample(videos["overlisted"], spans)] == [[1, 5, 8], [15, 17, 19]]


@pytest.mark.parametrize("workers", [0, 1])
def test_a_fifo_or_device_is_refused_before_any_decoder_opens_it(fifo: Path, workers: int) -> None:
    with FrameSampler(workers=workers, backend="pyav", timeout=60.0) as sampler:
        started = time.monotonic()
        for path in (fifo, Path("/dev/zero")):
            with pytest.raises(VideoError, match="is not a regular file"):
                sampler.sample(path, [(0.0, 1.0)])
            with pytest.raises(VideoError, match="is not a regular file"):
                sampler.probe(path)
        assert time.monotonic() - started < 10  # no worker waited on them


def test_probe_runs_under_the_time_limit(videos: dict[str, Path], stalling: Path) -> None:
    with FrameSampler(backend="pyav", workers=1, timeout=2.0) as sampler:
        assert sampler.probe(videos["counter"]).frame_count == 30
        started = time.monotonic()
        with pytest.raises(VideoError, match=r"did not finish within 2 s"):
            sampler.probe(stalling)
        assert time.monotonic() - started < 20
