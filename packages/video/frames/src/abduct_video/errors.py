"""What goes wrong with videos, named for the user."""

from __future__ import annotations

from pathlib import Path

from abduct import DataError


class VideoError(DataError):
    """A video that cannot be read: missing, empty, corrupt, or too slow to decode (a hang).

    The message starts with the file's path; the CLI prints it as one line and exits 2."""

    def __init__(self, file: str | Path, reason: str) -> None:
        super().__init__(reason, file=file)


class SpanClippedWarning(UserWarning):
    """A time span reached past the end of its video and was cut at the last frame."""


class DecoderFallbackWarning(UserWarning):
    """decord failed on a video (an error, a hang or a crash) and PyAV read it instead."""
