from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from abduct import VisualInput
from abduct_video import FrameSampler, SamplingSettings, SpanClippedWarning
from abduct_video.testing import frame_numbers

BACKENDS = ["decord", "pyav"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_uniform_frames_of_several_spans(videos: dict[str, Path], backend: str) -> None:
    with FrameSampler(SamplingSettings(frames_per_span=4), backend=backend, workers=0) as sampler:
        first, second = sampler.sample(videos["counter"], [(0.0, 1.0), (1.0, 3.0)])
    assert first.dtype == np.uint8 and first.shape == (4, 32, 32, 3)
    assert frame_numbers(first) == [1, 3, 6, 8]  # 0.125 s, 0.375 s, ... at 10 fps
    assert frame_numbers(second) == [12, 17, 22, 27]


@pytest.mark.parametrize("backend", BACKENDS)
def test_rate_mode_and_resizing(videos: dict[str, Path], backend: str) -> None:
    settings = SamplingSettings(mode="rate", fps=2.0, max_frames_per_span=3, size=16)
    with FrameSampler(settings, backend=backend, workers=0) as sampler:
        short, capped = sampler.sample(videos["counter"], [(0.5, 1.5), (0.0, 3.0)])
    assert frame_numbers(short) == [5, 10]
    assert short.shape == (2, 16, 16, 3)
    assert frame_numbers(capped) == [5, 15, 25]  # 6 steps capped to 3, spread over the span


@pytest.mark.parametrize("backend", BACKENDS)
def test_timestamps_place_frames_of_a_variable_rate_video(videos: dict[str, Path], backend: str) -> None:
    """Frames 0-29 at 30 fps, then frame 30 at 5 s: at 3 s frame 29 is still on screen
    (3 s x the average rate of 6.2 fps would say frame 18)."""
    with FrameSampler(SamplingSettings(frames_per_span=1), backend=backend, workers=0) as sampler:
        frames = sampler.sample(videos["gapped"], [(0.5, 0.5), (3.0, 3.0), (5.0, 5.0)])
    assert [frame_numbers(f) for f in frames] == [[15], [29], [30]]


@pytest.mark.parametrize("workers", [0, 2])
def test_many_videos_keep_the_request_order(videos: dict[str, Path], workers: int) -> None:
    requests = [(videos["counter"], [(2.0, 2.0)]), (videos["counter_mkv"], [(0.0, 0.0), (1.5, 1.5)]),
                (videos["counter"], [(0.0, 0.0)])]
    with FrameSampler(SamplingSettings(frames_per_span=1), workers=workers) as sampler:
        out = sampler.sample_many(requests)
    assert [[frame_numbers(f) for f in spans] for spans in out] == [[[20]], [[0], [15]], [[0]]]


def test_frames_of_an_input_with_related_inputs_and_a_span_limit(videos: dict[str, Path]) -> None:
    chain = VisualInput.video(str(videos["counter"]), ((0.0, 0.0), (1.0, 1.0)), related=(
        VisualInput.video(str(videos["counter_mkv"]), ((0.5, 0.5),)),
        VisualInput.video(str(videos["counter"]), ((2.0, 2.0),)),
    ))
    settings = SamplingSettings(frames_per_span=1)
    with FrameSampler(settings, workers=0) as sampler:
        assert [frame_numbers(f) for f in sampler.frames(chain)] == [[0], [10], [5], [20]]
        whole = sampler.frames(VisualInput.video(str(videos["counter_mkv"])))  # no spans: the whole video
    assert [frame_numbers(f) for f in whole] == [[10]]
    with FrameSampler(SamplingSettings(frames_per_span=1, max_spans=3), workers=0) as sampler:
        assert [frame_numbers(f) for f in sampler.frames(chain)] == [[0], [10], [5]]


def test_spans_past_the_end_are_clipped_with_one_warning_per_video(videos: dict[str, Path]) -> None:
    with FrameSampler(SamplingSettings(frames_per_span=2), workers=0) as sampler:
        with pytest.warns(SpanClippedWarning) as caught:
            inside, crossing, beyond = sampler.sample(videos["counter"], [(0.0, 1.0), (2.0, 4.0), (5.0, 6.0)])
            sampler.sample(videos["counter"], [(2.5, 9.0)])
            sampler.sample(videos["counter_mkv"], [(1.0, 2.5)])
    assert [str(w.message).split(":")[0] for w in caught] == [str(videos["counter"]), str(videos["counter_mkv"])]
    assert "3.00 s" in str(caught[0].message)
    assert frame_numbers(crossing) == [22, 27]  # 2-4 s cut to 2-3 s
    assert frame_numbers(beyond) == [29, 29]  # wholly past the end: the last frame
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a span ending exactly at the end is not clipped
        with FrameSampler(SamplingSettings(frames_per_span=2), workers=0) as sampler:
            sampler.sample(videos["counter"], [(2.0, 3.0)])


def test_decord_row_padding_bug_falls_back_to_pyav(videos: dict[str, Path]) -> None:
    """decord 0.6 cannot copy out frames 48 px wide; such a video is read with PyAV."""
    spans = [(0.0, 1.0)]
    with FrameSampler(backend="decord", workers=0) as decord_sampler, \
            FrameSampler(backend="pyav", workers=0) as pyav_sampler:
        assert np.array_equal(decord_sampler.sample(videos["width48"], spans)[0],
                              pyav_sampler.sample(videos["width48"], spans)[0])
