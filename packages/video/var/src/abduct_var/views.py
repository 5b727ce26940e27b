"""What ``samples.html`` shows of a VAR record (one generated event): the example's chain of
events, each with its video and span and its reference sentence (the hypothesis marked as the
masked one), the generated sentence beside the event's reference, and the event's scores.
Frames are not extracted here (a frame strip would need the videos decoded for the page)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from abduct_var.records import VarExample


def event_view(example: VarExample, record: Mapping[str, Any]) -> dict[str, Any] | None:
    position = record.get("position")
    if not isinstance(position, int) or not 0 <= position < len(example.counted):
        return None
    texts = [{"label": f"generated (event {position + 1})", "text": str(record.get("prediction", ""))}]
    for i, event in enumerate(example.counted):
        role = "hypothesis, masked" if i == example.hypothesis else "premise"
        here = " · this event" if i == position else ""
        texts.append({"label": f"event {i + 1} ({role}){here} · {event.video_id} {event.start:g}–{event.end:g} s",
                      "text": event.sentence.strip()})
    scores = {k: round(v, 4) for k, v in (record.get("metrics") or {}).items() if isinstance(v, (int, float))}
    return {"texts": texts, "category": "hypothesis" if position == example.hypothesis else "premise",
            "score": scores.get("cider"), "fields": {"example": example.id, **scores}}
