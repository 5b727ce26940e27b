"""abduct-video: frames from video time spans for abduct models.

Light at import: decord and PyAV are imported where frames are read or written."""

from __future__ import annotations

from abduct_video._writing import write_video

__all__ = ["write_video"]
