"""Reading VAR's annotation JSON: ``{example_id: {"events": [...], "hypothesis": int, "split": str}}``.

Each event is ``{video_id, timestamp: [start, end], clip_idx, clip_tot, duration, sentence}``.
The released files' quirks are accepted as they are: events that overlap or are not sorted by
start, ends past ``duration``, chains over several videos, sentences with leading spaces or
non-ASCII characters, examples that share an event chain and differ only in ``hypothesis``,
integer or float numbers. Anything else wrong is a DataError naming the file, the example id
and the field (``events[3].timestamp``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.kit import read_json, require_dir
from abduct_var.records import VarEvent, VarExample

SPLITS = ("train", "val", "test")
EVENT_FIELDS = ("video_id", "timestamp", "clip_idx", "clip_tot", "duration", "sentence")


def annotation_file(data_dir: Path, split: str) -> Path:
    """``DATA_DIR/var_<split>_v1.0.json`` (the release's name), else a single ``var_<split>*.json``."""
    data_dir = require_dir(Path(data_dir), "data directory")
    exact = data_dir / f"var_{split}_v1.0.json"
    if exact.is_file():
        return exact
    found = sorted(data_dir.glob(f"var_{split}*.json"))
    if len(found) == 1:
        return found[0]
    if not found:
        raise AbductError(f"no VAR annotation file for split '{split}' in {data_dir} (expected {exact.name})")
    raise AbductError(f"several VAR annotation files for split '{split}' in {data_dir}: "
                      f"{', '.join(p.name for p in found)}; keep one")


def _number(value: Any, file: Path, record: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DataError(f"expected a number, got {value!r}", file=file, record=record, field=field)
    return float(value)


def _integer(value: Any, file: Path, record: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DataError(f"expected an integer, got {value!r}", file=file, record=record, field=field)
    return value


def _event(raw: Any, file: Path, record: str, where: str) -> VarEvent:
    if not isinstance(raw, Mapping):
        raise DataError(f"expected an object, got {type(raw).__name__}", file=file, record=record, field=where)
    missing = [name for name in EVENT_FIELDS if name not in raw]
    if missing:
        raise DataError(f"missing {', '.join(missing)}", file=file, record=record, field=where)
    video_id = raw["video_id"]
    if not isinstance(video_id, str) or not video_id.strip() or "/" in video_id or "\\" in video_id:
        raise DataError(f"bad video id {video_id!r}", file=file, record=record, field=f"{where}.video_id")
    stamp = raw["timestamp"]
    if not isinstance(stamp, list) or len(stamp) != 2:
        raise DataError(f"expected [start, end], got {stamp!r}", file=file, record=record, field=f"{where}.timestamp")
    start = _number(stamp[0], file, record, f"{where}.timestamp")
    end = _number(stamp[1], file, record, f"{where}.timestamp")
    if not 0 <= start <= end:
        raise DataError(f"need 0 <= start <= end, got [{start}, {end}]", file=file, record=record,
                        field=f"{where}.timestamp")
    duration = _number(raw["duration"], file, record, f"{where}.duration")
    if duration <= 0:
        raise DataError(f"expected a positive duration, got {duration}", file=file, record=record,
                        field=f"{where}.duration")
    sentence = raw["sentence"]
    if not isinstance(sentence, str):
        raise DataError(f"expected a string, got {type(sentence).__name__}", file=file, record=record,
                        field=f"{where}.sentence")
    return VarEvent(video_id=video_id, start=start, end=end,
                    clip_idx=_integer(raw["clip_idx"], file, record, f"{where}.clip_idx"),
                    clip_tot=_integer(raw["clip_tot"], file, record, f"{where}.clip_tot"),
                    duration=duration, sentence=sentence)


def parse_examples(data: Any, file: Path) -> list[VarExample]:
    """Validated examples of a parsed annotation file, in file order."""
    if not isinstance(data, Mapping):
        raise DataError(f"expected an object keyed by example id, got {type(data).__name__}", file=file)
    examples = []
    for example_id, raw in data.items():
        record = str(example_id)
        if not isinstance(raw, Mapping):
            raise DataError(f"expected an object, got {type(raw).__name__}", file=file, record=record)
        for name in ("events", "hypothesis"):
            if name not in raw:
                raise DataError("missing", file=file, record=record, field=name)
        events = raw["events"]
        if not isinstance(events, list) or len(events) < 2:
            raise DataError("expected a list of at least two events (premise and hypothesis)", file=file,
                            record=record, field="events")
        parsed = tuple(_event(e, file, record, f"events[{i}]") for i, e in enumerate(events))
        hypothesis = _integer(raw["hypothesis"], file, record, "hypothesis")
        if not 0 <= hypothesis < len(parsed):
            raise DataError(f"index {hypothesis} is not one of the {len(parsed)} events", file=file, record=record,
                            field="hypothesis")
        split = raw.get("split", "")
        if not isinstance(split, str):
            raise DataError(f"expected a string, got {split!r}", file=file, record=record, field="split")
        examples.append(VarExample(record, parsed, hypothesis, split))
    return examples


def load_file(path: Path) -> list[VarExample]:
    path = Path(path)
    return parse_examples(read_json(path, "VAR annotation file"), path)


def load_split(data_dir: Path, split: str) -> tuple[list[VarExample], Path]:
    """The examples of ``split`` and the file they came from."""
    file = annotation_file(Path(data_dir), split)
    return load_file(file), file
