"""The BlackSwan challenge's submission file (CogVL @ CVPR 2026, MCQ track, test split).

One JSON object: each key a question id **as a string** (``str(q_id)``), each value the chosen
option's **0-based index** (0, 1 or 2); the organisers' own writer puts ``-1`` where no letter
could be parsed (it counts as wrong). What the organisers do with a missing key is not
published, so ``validate`` refuses one, as it refuses an extra key, a value out of range and a
value that is not an integer (a boolean, a float, a string) — one line for each kind of problem.

``abduct eval blackswan-mcq`` writes this file for the split it evaluates (``challenge.json``,
beside results.json); ``abduct blackswan submit RUN`` writes it from a test run's predictions;
``abduct score blackswan-mcq --predictions FILE --answer-key ...`` scores one on a split with
labels (validation), exactly as ``abduct eval`` scores the same answers.
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


def read_challenge(path: Path, ids: Sequence[str]) -> dict[str, int]:
    """A valid submission's answers; a DataError naming the file and its first problem otherwise."""
    data = read_json(Path(path), "BlackSwan submission")
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
