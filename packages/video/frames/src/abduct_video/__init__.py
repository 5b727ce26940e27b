"""abduct-video: frames from video time spans for abduct models.

``FrameSampler(settings, backend=..., workers=..., cache_dir=...)`` samples uniform or
fixed-rate frames from (video, spans) inputs in worker processes; ``write_video`` writes small
videos. decord and PyAV are imported only where frames are read or written.
"""

from __future__ import annotations

from abduct_video._sampler import FrameSampler
from abduct_video._settings import SamplingSettings, span_times
from abduct_video._writing import write_video
from abduct_video.errors import DecoderFallbackWarning, SpanClippedWarning, VideoError

__all__ = ["DecoderFallbackWarning", "FrameSampler", "SamplingSettings", "SpanClippedWarning", "VideoError", "span_times", "write_video"]
