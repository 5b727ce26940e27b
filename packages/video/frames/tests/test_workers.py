from __future__ import annotations

from pathlib import Path

import numpy as np

from abduct_video import FrameSampler, SamplingSettings
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
