from __future__ import annotations

import numpy as np
import pytest

from abduct_video import SamplingSettings, span_times
from abduct_video._settings import frame_indices


def test_uniform_takes_the_middle_of_equal_parts() -> None:
    times = span_times(SamplingSettings(frames_per_span=4), 2.0, 4.0)
    assert times.tolist() == pytest.approx([2.25, 2.75, 3.25, 3.75])
    assert span_times(SamplingSettings(frames_per_span=3), 1.0, 1.0).tolist() == [1.0, 1.0, 1.0]


def test_rate_steps_from_the_start_and_caps_at_the_maximum() -> None:
    var = SamplingSettings.var()
    assert var.mode == "rate" and var.fps == 2.0 and var.max_frames_per_span == 48 and var.max_spans == 12
    assert span_times(var, 1.0, 3.0).tolist() == pytest.approx([1.0, 1.5, 2.0, 2.5])
    assert span_times(var, 1.0, 3.1).tolist() == pytest.approx([1.0, 1.5, 2.0, 2.5, 3.0])
    assert span_times(var, 5.0, 5.0).tolist() == [5.0]  # at least one frame
    long = span_times(var, 0.0, 60.0)  # 120 steps: capped to 48, spread over the span
    assert len(long) == 48
    assert long[0] == pytest.approx(60 / 96) and long[-1] == pytest.approx(60 - 60 / 96)
    assert len(span_times(var, 0.0, 24.0)) == 48  # exactly the cap: still every 0.5 s
    assert span_times(var, 0.0, 24.0)[-1] == pytest.approx(23.5)


def test_frame_indices_follow_timestamps_not_the_average_rate() -> None:
    starts = np.array([0.0, 0.1, 0.2, 5.0, 5.1])  # a pause between 0.2 s and 5 s
    assert frame_indices(np.array([0.0, 0.05, 0.1, 3.0, 4.999, 5.0, 9.0]), starts).tolist() == [0, 0, 1, 2, 2, 3, 4]


def test_fingerprint_tracks_what_changes_pixels() -> None:
    base = SamplingSettings()
    assert base.fingerprint() == SamplingSettings(max_spans=12).fingerprint()
    assert base.fingerprint() != SamplingSettings(size=64).fingerprint()
    assert base.fingerprint() != SamplingSettings(frames_per_span=4).fingerprint()
    assert SamplingSettings(size=[32, 64]).size == (32, 64)  # type: ignore[arg-type]


def test_output_size() -> None:
    assert SamplingSettings().output_size(240, 426) is None
    assert SamplingSettings(size=(20, 30)).output_size(240, 426) == (20, 30)
    assert SamplingSettings(size=120).output_size(240, 426) == (120, 212)
    assert SamplingSettings(size=120).output_size(426, 240) == (212, 120)


@pytest.mark.parametrize("bad", [dict(mode="random"), dict(frames_per_span=0), dict(fps=0), dict(size=0),
                                 dict(size=(1, 2, 3)), dict(max_spans=0)])
def test_bad_settings_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SamplingSettings(**bad)  # type: ignore[arg-type]
