"""How a VAR example reaches a model: one ``VisualInput`` per event slot, in chain order.

A chain is the first slot's input with the other slots as its ``related`` inputs. An event
slot is its video with the event's time span; the masked hypothesis slot carries no media,
only the context ``MASK``, so a model sees where the missing event sits without seeing it.
Any video model can read a chain (the frame sampler gives one frame array per span, the
input's own, then each related input's); this package's models read the slots.
"""

from __future__ import annotations

from pathlib import Path

from abduct import VisualInput
from abduct_var.records import VIDEO_EXTENSIONS, VarEvent, VarExample

MASK = "[the missing event to explain]"
EXPLAIN_PROMPT = ("The video events are shown in order; one is missing. "
                  "Describe the missing event, the one that best explains the others, in one sentence.")
DESCRIBE_PROMPT = "Describe the event shown in the video in one sentence."


def video_path(videos: Path, video_id: str) -> Path:
    """``<videos>/<video_id>.<ext>`` for the first of mp4, mkv, webm that exists (mp4 when none does)."""
    for ext in VIDEO_EXTENSIONS:
        candidate = videos / f"{video_id}.{ext}"
        if candidate.is_file():
            return candidate
    return videos / f"{video_id}.{VIDEO_EXTENSIONS[0]}"


def event_file(event: VarEvent, videos: Path | None = None) -> str:
    """The event's video: the path the dataset resolved, else looked up in ``videos``."""
    if event.path:
        return event.path
    if videos is None:
        raise ValueError(f"event of video {event.video_id} has no resolved path and no videos folder was given")
    return str(video_path(videos, event.video_id))


def event_input(event: VarEvent, videos: Path | None = None) -> VisualInput:
    return VisualInput.video(event_file(event, videos), (event.span,))


def chain_input(example: VarExample, videos: Path | None, masked: int | None) -> VisualInput:
    """The counted events as slots, ``masked`` (an index, or None) replaced by the mask; each
    event's video as the dataset resolved it (else looked up in ``videos``)."""
    slots = [VisualInput(context=MASK, kind="video") if i == masked else event_input(e, videos)
             for i, e in enumerate(example.counted)]
    first, rest = slots[0], tuple(slots[1:])
    return VisualInput(first.media, context=first.context, spans=first.spans, related=rest, kind="video")


def chain_slots(visual: VisualInput) -> list[VisualInput]:
    """The slots of a chain, in order (the inverse of ``chain_input``)."""
    head = VisualInput(visual.media, context=visual.context, spans=visual.spans, kind=visual.kind)
    return [head, *visual.related]


def is_masked(slot: VisualInput) -> bool:
    return slot.media is None
