"""VAR's records: an example is a chain of events, one of which (the hypothesis) is masked.

As the loader reads a file, an event names its video by id only; the ``var`` dataset
(``dataset.VarDataset``) gives each event its video's absolute path and each example the pool
of sentences a choosing generator picks from."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    path: str = ""  # the video file, absolute, once the dataset has resolved it ("" as the loader reads it)

    @property
    def span(self) -> tuple[float, float]:
        """The time span in seconds; an end past the video's duration is kept as annotated
        (the frame sampler clips it, with one warning per video)."""
        return (self.start, self.end)


@dataclass(frozen=True)
class SentencePool:
    """What a choosing generator (``random``) picks from: every counted sentence of ``split``."""

    split: str
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class VarExample:
    id: str
    events: tuple[VarEvent, ...]
    hypothesis: int
    split: str
    # shared by every example of one load (the training split's sentences); None as the loader reads it
    pool: SentencePool | None = field(default=None, compare=False, repr=False)

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
