"""The BlackSwan challenge's submission file (CogVL @ CVPR 2026, MCQ track, test split).

One JSON object: each key a question id **as a string** (``str(q_id)``), each value the chosen
option's **0-based index** (0, 1 or 2); the organisers' own writer puts ``-1`` where no letter
could be parsed (it counts as wrong). What the organisers do with a missing key is not
published, so ``validate`` refuses one, as it refuses an extra key, a value out of range and a
value that is not an integer (a boolean, a float, a string) — one line for each kind of problem.

``abduct eval blackswan-mcq`` writes this file for the split it evaluates (``challenge.json``,
beside results.json); ``abduct blackswan submit RUN`` writes it from a test run's predictions;
``abduct score blackswan-mcq --predictions FILE --answer-key ...`` scores one on a split with
labels (validation), exactly as ``abduct eval`` scores the same answers; it also reads a run's
``predictions.jsonl`` (abduct's own output), whose every question must be answered.

The file names no split, and the two splits' ids may be the same numbers (the synthetic
corpus restarts them), so the ids alone cannot tell a validation answer file from a test one.
A file that lies in a run folder (a ``results.json`` of ``blackswan-mcq`` beside it) is
therefore checked against that run too (``require_run``): a validation run's ``challenge.json``
is refused as a test submission, a test run's as a validation answer file, and so is a file of
a run limited by ``--limit`` or of another task, each in one line naming the file to give.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.kit import read_json

CHALLENGE = "challenge.json"
VALUES = (-1, 0, 1, 2)
SHOWN = 5  # ids named in a problem line


def _listed(keys: Sequence[str]) -> str:
    return ", ".join(keys[:SHOWN]) + (f", ... ({len(keys) - SHOWN} more)" if len(keys) > SHOWN else "")


def problems(data: Any, ids: Sequence[str]) -> list[str]:
    """What is wrong with a parsed submission against the questions ``ids``: one line per kind."""
    if not isinstance(data, Mapping):
        return [f"expected one JSON object {{question id: option index}}, got {type(data).__name__}"]
    known = set(ids)
    wrong_type = [k for k, v in data.items() if isinstance(v, bool) or not isinstance(v, int)]
    out_of_range = [k for k, v in data.items() if k not in wrong_type and v not in VALUES]
    found = []
    if missing := [i for i in ids if i not in data]:
        found.append(f"{len(missing)} question(s) without an answer: {_listed(missing)}")
    if extra := [k for k in data if k not in known]:
        found.append(f"{len(extra)} key(s) that are no question id of the split: {_listed(extra)}")
    if out_of_range:
        shown = [f"{k}={data[k]}" for k in out_of_range]
        found.append(f"{len(out_of_range)} value(s) out of range (0, 1, 2, or -1 for no answer): {_listed(shown)}")
    if wrong_type:
        shown = [f"{k}={json.dumps(data[k])}" for k in wrong_type]
        found.append(f"{len(wrong_type)} value(s) that are not integers: {_listed(shown)}")
    return found


def _run_beside(path: Path) -> tuple[Path, Mapping[str, Any]] | None:
    """The results.json of the run folder holding ``path`` and what it says, or None when there is
    none (or it cannot be read: then the file is judged by its content alone)."""
    results = Path(path).parent / "results.json"
    if not results.is_file():
        return None
    try:
        run = read_json(results, "run's results")
    except AbductError:
        return None
    return (results, run) if isinstance(run, Mapping) else None


def require_run(path: Path, split: str) -> None:
    """An AbductError naming the file to give when ``path`` lies in a run folder whose run cannot
    have answered every question of ``split``: another task, another split, or ``--limit``."""
    found = _run_beside(path)
    if found is None:
        return
    results, run = found
    task, written, limit = str(run.get("task", "")), run.get("split"), run.get("limit")
    if task.split(",")[0] != "blackswan-mcq":
        raise AbductError(f"{path}: written by a {task or 'non-blackswan-mcq'} run ({results}); give the "
                          f"{CHALLENGE} or predictions.jsonl of a blackswan-mcq run on the {split} split")
    if written != split:
        raise AbductError(f"{path}: written by a blackswan-mcq run on the {written} split ({results}), not the "
                          f"{split} split; give the {CHALLENGE} of a run with --split {split}")
    if limit is not None:
        raise AbductError(f"{path}: written by a run limited to {limit} questions ({results}); every question of "
                          f"the {split} split needs an answer: give the {CHALLENGE} of a run without --limit")


def read_challenge(path: Path, ids: Sequence[str]) -> dict[str, int]:
    """A valid submission's answers; a DataError naming the file and its first problem otherwise.
    A run's ``predictions.jsonl`` (a ``.jsonl`` file) is read as ``abduct blackswan submit`` reads it."""
    path = Path(path)
    if path.is_dir():
        raise AbductError(f"{path}: a folder; give a file: a run's {CHALLENGE} (or its predictions.jsonl)")
    data: Any = jsonl_answers(path) if path.suffix == ".jsonl" else read_json(path, "BlackSwan submission")
    found = problems(data, ids)
    if found:
        raise DataError(found[0], file=path)
    return {key: int(data[key]) for key in ids}


def run_answers(source: Path) -> dict[str, int]:
    """``{question id: answer}`` from a run folder (its results.json must be a full
    ``blackswan-mcq`` run on the test split) or its predictions.jsonl."""
    source = Path(source)
    if source.is_dir():
        results = read_json(source / "results.json", "run's results")
        task, split, limit = str(results.get("task", "")), results.get("split"), results.get("limit")
        if task.split(",")[0] != "blackswan-mcq":
            raise AbductError(f"{source}: a run of {task or 'an unknown task'}; the challenge takes blackswan-mcq")
        if split != "test":
            raise AbductError(f"{source}: a run on the {split} split; the challenge takes the test split "
                              "(abduct eval blackswan-mcq --split test ...)")
        if limit is not None:
            raise AbductError(f"{source}: a run limited to {limit} questions; the challenge needs every test question")
        source = source / "predictions.jsonl"
    return jsonl_answers(source)


def jsonl_answers(source: Path) -> dict[str, int]:
    """``{question id: answer}`` from a blackswan-mcq run's predictions.jsonl."""
    answers: dict[str, int] = {}
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AbductError(f"{source}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise DataError("not valid JSON", file=source, record=f"line {number}") from None
        if not isinstance(record, dict) or "id" not in record or "answer" not in record:
            raise DataError("expected a blackswan-mcq prediction ({id, answer, ...})", file=source,
                            record=f"line {number}")
        answer = record["answer"]
        if isinstance(answer, bool) or not isinstance(answer, int) or answer not in VALUES:
            raise DataError(f"expected 0, 1, 2 or -1, got {answer!r}", file=source, record=f"line {number}",
                            field="answer")
        answers[str(record["id"])] = int(answer)
    if not answers:
        raise DataError("no predictions", file=source)
    return answers
