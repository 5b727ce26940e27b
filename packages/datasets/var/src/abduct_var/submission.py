"""VAR's submission format and its checks.

``{example_id: [{"sentence": prediction, "gt_sentence": reference, "is_hypothesis": bool}, ...]}``,
one entry per event in chain order. The submission carries its own references, so scoring needs
no answer key; ``validate_against`` also compares it with the annotation file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abduct import DataError
from abduct.kit import read_json
from abduct_var.records import MAX_EVENTS, VarExample


@dataclass(frozen=True)
class Entry:
    example_id: str
    position: int
    sentence: str
    gt_sentence: str
    is_hypothesis: bool


def parse_submission(data: Any, file: Path | str | None = None) -> list[Entry]:
    """Every entry, in file order; DataError naming the file, the example and the field."""
    if not isinstance(data, Mapping) or not data:
        raise DataError("expected a non-empty object {example_id: [events]}", file=file)
    entries = []
    for example_id, events in data.items():
        if not isinstance(events, list) or not events:
            raise DataError("expected a non-empty list of events", file=file, record=example_id)
        for i, event in enumerate(events):
            where = f"[{i}]"
            if not isinstance(event, Mapping):
                raise DataError(f"expected an object, got {type(event).__name__}", file=file, record=example_id,
                                field=where)
            for key, kind in (("sentence", str), ("gt_sentence", str), ("is_hypothesis", bool)):
                if key not in event:
                    raise DataError("missing", file=file, record=example_id, field=f"{where}.{key}")
                if not isinstance(event[key], kind):
                    raise DataError(f"expected a {kind.__name__}, got {event[key]!r}", file=file, record=example_id,
                                    field=f"{where}.{key}")
            entries.append(Entry(str(example_id), i, event["sentence"], event["gt_sentence"], event["is_hypothesis"]))
    return entries


def load_submission(path: Path) -> list[Entry]:
    return parse_submission(read_json(Path(path), "VAR submission"), path)


def build_submission(entries: Sequence[Entry]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for e in sorted(entries, key=lambda e: e.position):
        out.setdefault(e.example_id, []).append(
            {"sentence": e.sentence, "gt_sentence": e.gt_sentence, "is_hypothesis": e.is_hypothesis})
    return {key: out[key] for key in dict.fromkeys(e.example_id for e in entries)}


def validate_against(entries: Sequence[Entry], examples: Sequence[VarExample], *,
                     which: str = "all") -> list[str]:
    """Problems of a submission against the annotations: unknown or missing examples, and per
    example missing, extra or reordered events (``gt_sentence`` names the event), and wrong
    ``is_hypothesis``. ``which``: ``all`` (every counted event), ``hypothesis`` or ``premise``
    (what var-explanation and var-premise write)."""
    problems: list[str] = []
    by_id: dict[str, list[Entry]] = {}
    for e in entries:
        by_id.setdefault(e.example_id, []).append(e)
    known = {x.id: x for x in examples}
    for example_id in by_id:
        if example_id not in known:
            problems.append(f"example {example_id}: not in the annotations")
    for x in examples:
        got = by_id.get(x.id)
        if got is None:
            problems.append(f"example {x.id}: missing")
            continue
        positions = [i for i in range(len(x.counted))
                     if which == "all" or (i == x.hypothesis) == (which == "hypothesis")]
        expected = [(x.counted[i].sentence, i == x.hypothesis) for i in positions]
        found = [(e.gt_sentence, e.is_hypothesis) for e in got]
        if found == expected:
            continue
        if len(found) != len(expected):
            problems.append(f"example {x.id}: {len(found)} events, expected {len(expected)} "
                            f"({which} events among the first {MAX_EVENTS})")
        elif sorted(s for s, _ in found) == sorted(s for s, _ in expected) and [s for s, _ in found] != [
                s for s, _ in expected]:
            problems.append(f"example {x.id}: events in the wrong order (expected the annotation's order)")
        else:
            for k, (have, want) in enumerate(zip(found, expected)):
                if have[0] != want[0]:
                    problems.append(f"example {x.id}: event [{k}] gt_sentence differs from the annotation's "
                                    f"{want[0]!r}")
                    break
                if have[1] != want[1]:
                    problems.append(f"example {x.id}: event [{k}] is_hypothesis is {have[1]}, expected {want[1]}")
                    break
    return problems
