"""VAR's records: an example is a chain of events, one of which (the hypothesis) is masked."""

from __future__ import annotations

from dataclasses import dataclass

# Only the first 12 events of an example count (the released features and REASONER stop there).
MAX_EVENTS = 12
VIDEO_EXTENSIONS = ("mp4", "mkv", "webm")


@dataclass(frozen=True)
class VarEvent:
    """One event as the annotation file gives it; ``sentence`` is kept verbatim (leading spaces
    and non-ASCII characters included: the scorer cleans them exactly as the eval kit does)."""

    video_id: str
    start: float
    end: float
    clip_idx: int
    clip_tot: int
    duration: float
    sentence: str

    @property
    def span(self) -> tuple[float, float]:
        """The time span in seconds; an end past the video's duration is kept as annotated
        (the frame sampler clips it, with one warning per video)."""
        return (self.start, self.end)


@dataclass(frozen=True)
class VarExample:
    id: str
    events: tuple[VarEvent, ...]
    hypothesis: int
    split: str

    @property
    def counted(self) -> tuple[VarEvent, ...]:
        """The events that count: the first ``MAX_EVENTS``."""
        return self.events[:MAX_EVENTS]

    @property
    def premise_positions(self) -> list[int]:
        return [i for i in range(len(self.counted)) if i != self.hypothesis]

    @property
    def video_ids(self) -> list[str]:
        return list(dict.fromkeys(e.video_id for e in self.events))
