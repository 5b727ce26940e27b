"""Reading BlackSwan's question files into questions (``records.py``), validated.

MCQ fields (verified): ``q_id``, ``task`` (Detective or Reporter), ``difficulty`` (easy,
medium, hard), ``default_question``, ``mcq_options`` (three non-empty strings) and
``mcq_gt_option`` (0, 1 or 2). Gen fields (verified): ``q_id``, ``task`` (Forecaster, Detective
or Reporter), ``gt_ref_ans`` (a list of strings), and the clips; its question text is not
verified (``default_question`` or ``question`` when present). Y/N fields: found on the file
(``yn.py``). Clips: ``clips.py``.

How the test split hides its labels is not verified: there, a label field that is absent,
``null``, ``""``, ``-1`` or ``[]`` means hidden, and a file whose labels are all hidden gives
questions without labels; a file that gives some labels and hides others is refused. In the
validation split every label is required. Every error names the file, the record and the field;
two questions with one ``str(q_id)`` in a file are refused (the submission file is keyed by it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from abduct import DataError
from abduct_blackswan import yn
from abduct_blackswan.clips import Clips, read_clips, require
from abduct_blackswan.jsonfile import Raw, read_records
from abduct_blackswan.records import DIFFICULTIES, GenQuestion, McqQuestion, YnQuestion

Question = TypeVar("Question", McqQuestion, YnQuestion, GenQuestion)
MCQ_TASKS = ("Detective", "Reporter")
GEN_TASKS = ("Forecaster", "Detective", "Reporter")
HIDDEN: tuple[Any, ...] = (None, "", -1, [])


def question_id(raw: Raw, field: str = "q_id") -> tuple[Any, str]:
    """The id as given and as keyed (``str``)."""
    value = raw.require(field)
    if isinstance(value, bool) or not isinstance(value, int | str) or (isinstance(value, str) and not value.strip()):
        raise raw.error(f"expected an integer or a non-empty string, got {value!r}", field)
    return value, str(value)


def named_task(raw: Raw, allowed: Sequence[str], field: str = "task") -> str:
    value = raw.require(field)
    if isinstance(value, str) and value.strip().capitalize() in allowed:
        return value.strip().capitalize()
    raise raw.error(f"expected one of {', '.join(allowed)}, got {value!r}", field)


def difficulty(raw: Raw, field: str = "difficulty") -> str:
    value = raw.require(field)
    if isinstance(value, str) and value.strip().lower() in DIFFICULTIES:
        return value.strip().lower()
    raise raw.error(f"expected one of {', '.join(DIFFICULTIES)}, got {value!r}", field)


def optional_text(raw: Raw, names: Sequence[str]) -> str | None:
    for name in names:
        if name in raw.fields and raw.fields[name] is not None:
            return raw.text(name, empty=True)
    return None


def clips_for(raw: Raw, folder: Path, task: str) -> Clips:
    clips = read_clips(raw, folder)
    require(raw, task, clips)
    return clips


def labelled(records: Sequence[Raw], field: str | None, split: str) -> bool:
    """Whether the file gives its labels: always in validation; in test, all or none (see the
    module docstring). A refused mix is one line naming the first hidden one."""
    if split == "validation":
        return True
    given = [field is not None and r.fields.get(field, None) not in HIDDEN for r in records]
    if any(given) and not all(given):
        first = records[given.index(False)]
        raise first.error("this test file gives some labels and hides others", field)
    return any(given)


def _unique(questions: list[Question], records: Sequence[Raw]) -> list[Question]:
    seen: dict[str, str] = {}
    for question, raw in zip(questions, records):
        if question.id in seen:
            raise raw.error(f"question id {question.id!r} repeats ({seen[question.id]})", "q_id")
        seen[question.id] = raw.place
    return questions


def _read(file: Path, records: Sequence[Raw], parse: Callable[[Raw], Question]) -> list[Question]:
    if not records:
        raise DataError("no questions", file=file)
    return _unique([parse(raw) for raw in records], records)


def load_mcq(file: Path, folder: Path, split: str) -> list[McqQuestion]:
    records = read_records(file)
    with_labels = labelled(records, "mcq_gt_option", split)

    def parse(raw: Raw) -> McqQuestion:
        q_id, key = question_id(raw)
        task = named_task(raw, MCQ_TASKS)
        options = raw.require("mcq_options")
        if not (isinstance(options, list) and len(options) == 3
                and all(isinstance(o, str) and o.strip() for o in options)):
            raise raw.error(f"expected a list of three non-empty strings, got {options!r}", "mcq_options")
        label = None
        if with_labels:
            label = raw.require("mcq_gt_option")
            if not isinstance(label, int) or isinstance(label, bool) or label not in (0, 1, 2):
                raise raw.error(f"expected 0, 1 or 2 (the right option's index), got {label!r}", "mcq_gt_option")
        return McqQuestion(key, q_id, task, difficulty(raw), raw.text("default_question"),
                           (options[0], options[1], options[2]), label, clips_for(raw, folder, task),
                           str(file), raw.place)

    return _read(file, records, parse)


def load_yn(file: Path, folder: Path, split: str) -> list[YnQuestion]:
    records = read_records(file)
    if not records:
        raise DataError("no questions", file=file)
    layout = yn.discover(records, file, labelled=split == "validation")
    with_labels = labelled(records, layout.label, split)

    def parse(raw: Raw) -> YnQuestion:
        q_id, key = question_id(raw, layout.id)
        task = yn.task_of(raw, layout.task)
        label = yn.label_of(raw, layout.label) if with_labels and layout.label is not None else None
        level = difficulty(raw, layout.difficulty) if layout.difficulty is not None else None
        question = optional_text(raw, [layout.question]) if layout.question is not None else None
        return YnQuestion(key, q_id, task, raw.text(layout.hypothesis), label, clips_for(raw, folder, task), level,
                          question, str(file), raw.place, layout)

    return _read(file, records, parse)


def load_gen(file: Path, folder: Path, split: str) -> list[GenQuestion]:
    records = read_records(file)
    with_references = labelled(records, "gt_ref_ans", split)

    def parse(raw: Raw) -> GenQuestion:
        q_id, key = question_id(raw)
        task = named_task(raw, GEN_TASKS)
        references: tuple[str, ...] = ()
        if with_references:
            given = raw.require("gt_ref_ans")
            if not (isinstance(given, list) and given and all(isinstance(r, str) for r in given)):
                raise raw.error(f"expected a non-empty list of strings, got {given!r}", "gt_ref_ans")
            references = tuple(given)
        level = difficulty(raw) if "difficulty" in raw.fields else None
        return GenQuestion(key, q_id, task, references, clips_for(raw, folder, task),
                           optional_text(raw, ("default_question", "question")), level, str(file), raw.place)

    return _read(file, records, parse)
