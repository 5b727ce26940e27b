"""The Y/N file's layout, found on the file: its field names are not verified.

No reader of the released Y/N files could be found; the construction code named its fields
``exp`` (the hypothesis), ``def_label`` ("yes"/"no"), ``def_task`` (1 = Detective, 2 = Reporter)
and ``def_id`` before release, and the MCQ repo renamed its own fields on release
(``mcq_label`` became ``mcq_gt_option``, ``mcq_task`` became ``task``). So each role is the one
field of the file (over all its records) among its candidates:

| role | candidates, in order | values |
|---|---|---|
| id | ``q_id``, ``def_id``, ``id`` | an integer or a string, keyed as ``str(q_id)`` |
| hypothesis | ``hypothesis``, ``exp``, ``hyp``, ``statement`` | a non-empty string |
| task | ``task``, ``def_task`` | ``Detective``/``Reporter`` (any case), or 1/2 (integer or digit) |
| label (validation) | ``def_label``, ``label``, ``answer``, ``gt_answer`` | ``yes``/``no`` (any case), or true/false |
| question (optional) | ``default_question``, ``question`` | a string |
| difficulty (optional) | ``difficulty`` | ``easy``/``medium``/``hard`` |

A file with none of a required role's candidates is refused in one line naming the fields it
has; a file with two candidates of one role is refused as ambiguous. The layout found goes into
results.json (``details["fields"]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from abduct import DataError
from abduct_blackswan.jsonfile import Raw
from abduct_blackswan.records import YnLayout

CANDIDATES: dict[str, tuple[str, ...]] = {
    "id": ("q_id", "def_id", "id"),
    "hypothesis": ("hypothesis", "exp", "hyp", "statement"),
    "task": ("task", "def_task"),
    "label": ("def_label", "label", "answer", "gt_answer"),
    "question": ("default_question", "question"),
    "difficulty": ("difficulty",),
}
REQUIRED = ("id", "hypothesis", "task")
TASK_NUMBERS = {1: "Detective", 2: "Reporter"}  # def_task in the construction code (get_yn.py)


def discover(records: Sequence[Raw], file: Path, *, labelled: bool) -> YnLayout:
    """The field of each role (see the module docstring); ``labelled``: the label is required."""
    present: dict[str, None] = {}
    for raw in records:
        present.update(dict.fromkeys(raw.fields))
    chosen: dict[str, str | None] = {}
    for role, names in CANDIDATES.items():
        found = [n for n in names if n in present]
        if len(found) > 1:
            raise DataError(f"ambiguous Y/N layout: fields {' and '.join(found)} could both be the {role} "
                            f"(fields found: {', '.join(present)})", file=file)
        chosen[role] = found[0] if found else None
    missing = [r for r in (*REQUIRED, *(("label",) if labelled else ())) if chosen[r] is None]
    if missing:
        wanted = "; ".join(f"{r}: one of {', '.join(CANDIDATES[r])}" for r in missing)
        raise DataError(f"unknown Y/N layout: fields found {', '.join(present) or 'none'}; expected {wanted}",
                        file=file)
    return YnLayout(id=str(chosen["id"]), hypothesis=str(chosen["hypothesis"]), task=str(chosen["task"]),
                    label=chosen["label"], question=chosen["question"], difficulty=chosen["difficulty"])


def task_of(raw: Raw, field: str) -> str:
    """``Detective``/``Reporter`` from a task field: the name (any case) or 1/2."""
    value = raw.require(field)
    if isinstance(value, str) and value.strip().capitalize() in TASK_NUMBERS.values():
        return value.strip().capitalize()
    number: Any = value
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if isinstance(number, int) and not isinstance(number, bool) and number in TASK_NUMBERS:
        return TASK_NUMBERS[number]
    raise raw.error(f"expected Detective or Reporter (or 1 / 2), got {value!r}", field)


def label_of(raw: Raw, field: str) -> bool:
    """True for yes, False for no: "yes"/"no" in any case, or a JSON boolean."""
    value = raw.require(field)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
        return value.strip().lower() == "yes"
    raise raw.error(f"expected yes or no, got {value!r}", field)
