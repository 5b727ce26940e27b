"""What ``samples.html`` shows of a VAR record (one generated event): the example's chain of
events, each with its video and span and its reference sentence (the hypothesis marked as the
masked one), the generated sentence beside the event's reference, and the event's scores
(x100, the scale of the eval kit and of results.json; CIDEr-D up to 1000); with ``strip_of`` (the strips of ``_strips.frame_strips``), a frame strip per event of the chain, the
hypothesis's labelled as the frames the model was not shown."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from abduct_var._strips import MAX_STRIPS
from abduct_var.records import VarEvent, VarExample

StripOf = Callable[[VarEvent], tuple[str, Path | None] | None]  # event -> (its video, its strip), None past the cap


def strip_images(example: VarExample, strip_of: StripOf) -> list[dict[str, Any]]:
    """One image per event: its strip, or an empty path and a caption saying why there is none."""
    images = []
    for i, event in enumerate(example.counted):
        role = "hypothesis, masked: frames the model was not shown" if i == example.hypothesis else "premise"
        caption = f"event {i + 1} ({role}) · {event.video_id} {event.start:g}–{event.end:g} s"
        found = strip_of(event)
        if found is None:
            images.append({"path": "", "caption": f"{caption} · no frames drawn (only the first {MAX_STRIPS:,} events get a strip)"})
        elif found[1] is None:
            video = Path(found[0]).name  # the file's name: the page holds no path of this machine
            images.append({"path": "", "caption": f"{caption} · no frames: video missing or unreadable ({video})"})
        else:
            images.append({"path": str(found[1]), "caption": caption})
    return images


def event_view(example: VarExample, record: Mapping[str, Any], strip_of: StripOf | None = None) -> dict[str, Any] | None:
    position = record.get("position")
    if not isinstance(position, int) or not 0 <= position < len(example.counted):
        return None
    texts = [{"label": f"generated (event {position + 1})", "text": str(record.get("prediction", ""))}]
    for i, event in enumerate(example.counted):
        role = "hypothesis, masked" if i == example.hypothesis else "premise"
        here = " · this event" if i == position else ""
        texts.append({"label": f"event {i + 1} ({role}){here} · {event.video_id} {event.start:g}–{event.end:g} s",
                      "text": event.sentence.strip()})
    scores = {k: round(v, 2) for k, v in (record.get("metrics") or {}).items() if isinstance(v, (int, float))}
    images = strip_images(example, strip_of) if strip_of is not None else None
    return {"texts": texts, "images": images, "category": "hypothesis" if position == example.hypothesis else "premise",
            "score": scores.get("cider"), "score_name": "cider",
            "fields": {"example": example.id, **scores, "metrics": None}}  # the record's metrics, shown rounded
