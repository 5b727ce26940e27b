from __future__ import annotations

import functools
import shutil
from pathlib import Path

import numpy as np
import pytest

from abduct_testing.damage import KINDS, damage, rewrite_npz
from abduct_video import FrameSampler, SamplingSettings, SpanClippedWarning, write_video
from abduct_video.testing import counter_frames, frame_numbers

SPANS = [(0.0, 1.0), (2.0, 5.0)]


def test_second_run_reads_the_cache(videos: dict[str, Path], tmp_path: Path) -> None:
    settings = SamplingSettings(frames_per_span=3)
    with FrameSampler(settings, workers=0, cache_dir=tmp_path) as first, pytest.warns(SpanClippedWarning):
        fresh = first.sample(videos["counter"], SPANS)
    assert (first.cache_hits, first.decoded_spans) == (0, 2)
    assert list((tmp_path / "frames").rglob("*.npz"))
    with FrameSampler(settings, workers=0, cache_dir=tmp_path) as second, pytest.warns(SpanClippedWarning):
        cached = second.sample(videos["counter"], SPANS)  # the clipping warning survives the cache
    assert (second.cache_hits, second.decoded_spans) == (2, 0)
    assert all(np.array_equal(a, b) for a, b in zip(fresh, cached))


def test_cache_keys_on_content_and_settings(videos: dict[str, Path], tmp_path: Path) -> None:
    video = tmp_path / "clip.mp4"
    shutil.copy(videos["counter"], video)
    settings = SamplingSettings(frames_per_span=1)
    with FrameSampler(settings, workers=0, cache_dir=tmp_path / "cache") as sampler:
        sampler.sample(video, [(1.0, 1.0)])
    moved = tmp_path / "moved.mp4"
    video.rename(moved)
    with FrameSampler(settings, workers=0, cache_dir=tmp_path / "cache") as sampler:
        sampler.sample(moved, [(1.0, 1.0)])  # same bytes elsewhere: a hit
        assert sampler.cache_hits == 1
    write_video(moved, counter_frames(30)[::-1].copy(), fps=10)  # new content at the same path
    with FrameSampler(settings, workers=0, cache_dir=tmp_path / "cache") as sampler:
        (frames,) = sampler.sample(moved, [(1.0, 1.0)])
        assert sampler.cache_hits == 0 and frame_numbers(frames) == [19]
    with FrameSampler(SamplingSettings(frames_per_span=2), workers=0, cache_dir=tmp_path / "cache") as sampler:
        sampler.sample(moved, [(1.0, 1.0)])
        assert sampler.cache_hits == 0
    with FrameSampler(settings, backend="pyav", workers=0, cache_dir=tmp_path / "cache") as sampler:
        sampler.sample(moved, [(1.0, 1.0)])
        assert sampler.cache_hits == 0


def test_a_damaged_cache_entry_is_decoded_again(videos: dict[str, Path], tmp_path: Path) -> None:
    with FrameSampler(workers=0, cache_dir=tmp_path) as sampler:
        (good,) = sampler.sample(videos["moving"], [(0.0, 1.0)])
    (entry,) = (tmp_path / "frames").rglob("*.npz")
    entry.write_bytes(b"not a zip")
    with FrameSampler(workers=0, cache_dir=tmp_path) as sampler:
        (again,) = sampler.sample(videos["moving"], [(0.0, 1.0)])
        assert sampler.decoded_spans == 1
    assert np.array_equal(good, again)


DAMAGE = {**{kind: functools.partial(damage, kind=kind) for kind in KINDS},  # flipped: the .npz CRCs catch it
          "nan": lambda p: rewrite_npz(p, duration=np.asarray(np.nan)),
          "other format": lambda p: rewrite_npz(p, frames=np.zeros((2, 3), np.float32))}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_cache_entry_is_said_once_and_decoded_again(videos: dict[str, Path], tmp_path: Path,
                                                             damage: str) -> None:
    import warnings

    from abduct.kit.cache import CacheWarning

    with FrameSampler(workers=0, cache_dir=tmp_path) as sampler:
        (good,) = sampler.sample(videos["moving"], [(0.0, 1.0)])
    (entry,) = (tmp_path / "frames").rglob("*.npz")
    DAMAGE[damage](entry)
    with warnings.catch_warnings(record=True) as caught, FrameSampler(workers=0, cache_dir=tmp_path) as sampler:
        warnings.simplefilter("always")
        (again,) = sampler.sample(videos["moving"], [(0.0, 1.0)])
        assert sampler.decoded_spans == 1
    said = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(said) == 1 and str(entry) in said[0], said
    assert np.array_equal(good, again) and entry.is_file()  # decoded again, and kept whole again
