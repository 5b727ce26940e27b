"""What ``samples.html`` shows of a localization record (one image: every GT box drawn, each
labelled with the box whose inference the assignment gave it) and of a comparison record (one
source: its image and region, its clue, the candidate inferences with the model's scores and
ranks beside the two annotators' ratings). Per-sample figures are on the report's scale (x100,
as results.json gives the macro means); a comparison source is not right or wrong, so it is
flagged by whether the model's order agrees with the annotators' (accuracy above or below 0)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from abduct import VisualInput
from abduct.kit import scored_texts
from abduct_sherlock.keys import ComparisonSource, GTImage


def _percent(record: Mapping[str, Any], names: Sequence[str]) -> dict[str, float]:
    """The record's per-sample figures (fractions) x100, as the report gives their means."""
    return {n: round(100 * float(record[n]), 2) for n in names if isinstance(record.get(n), (int, float))}


def _boxes(visual: VisualInput, label: str) -> list[list[Any]]:
    if visual.region is None:
        return []
    return [[b.left, b.top, b.width, b.height, label] for b in visual.region.boxes]


def localization_view(gt: GTImage, visuals: Mapping[str, VisualInput], texts: Mapping[str, str],
                      record: Mapping[str, Any]) -> dict[str, Any] | None:
    """Box r's region and clue are its row's input, inference c its column's text (``GTImage.cells``)."""
    assigned: Sequence[int] = record.get("assignment") or []
    rows: dict[int, VisualInput] = {}
    columns: dict[int, str] = {}
    for tid, (r, c) in gt.cells.items():
        rows.setdefault(r, visuals[tid])
        columns.setdefault(c, texts[tid])
    if len(assigned) != gt.size or not rows:
        return None
    boxes, shown = [], []
    for r in range(gt.size):
        c = assigned[r]
        mark = "✓" if c == r else "✗"
        boxes += _boxes(rows[r], f"{r + 1}→{c + 1} {mark}")
        shown.append({"label": f"box {r + 1} · clue", "text": rows[r].context or ""})
        own = "its own" if c == r else f"box {c + 1}'s"
        shown.append({"label": f"box {r + 1} · assigned {own} inference {mark}", "text": columns.get(c, "")})
    media = rows[0].media or ""
    figures = _percent(record, ("gt_accuracy", "auto_accuracy", "auto_oracle"))
    return {"id": str(record.get("image", media)), "images": [{"path": media, "boxes": boxes}], "texts": shown,
            "correct": all(c == r for r, c in enumerate(assigned)), "score": figures.get("gt_accuracy"),
            "score_name": "gt_accuracy", "fields": figures}


def comparison_view(source: ComparisonSource, visuals: Mapping[str, VisualInput], texts: Mapping[str, str],
                    record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The candidates in annotation order; every one shows the source's image, region and clue."""
    scores = record.get("scores")
    if not source.candidates or not isinstance(scores, list) or len(scores) != len(source.candidates):
        return None
    first = visuals[source.candidates[0][0]]
    names = [f"candidate {k + 1} · annotators {a:g}, {b:g}" for k, (_, a, b) in enumerate(source.candidates)]
    shown = [{"label": "clue", "text": first.context or ""},
             *scored_texts(names, [texts[tid] for tid, _, _ in source.candidates], scores)]
    figures = _percent(record, ("accuracy", "human", "oracle"))
    accuracy = figures.get("accuracy")
    flags = {} if accuracy is None else {"disagrees with humans": accuracy < 0, "agrees with humans": accuracy > 0}
    return {"id": source.input_iid, "images": [{"path": first.media or "", "boxes": _boxes(first, "clue")}],
            "texts": shown, "score": accuracy, "score_name": "accuracy", "flags": flags,
            "fields": {**figures, "scores": None}}  # the scores are in the candidates' labels
