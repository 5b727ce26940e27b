"""Input validation shared by every metric and by ``abduct metric`` (abduct-metrics' ``load_inputs``).

Predictions are ``{id: text}``, references ``{id: [text, ...]}`` (at least one each) and
optional questions ``{id: text}``. The first offending id is named, in prediction order
(then ids found only in the references or questions), so a user can find it in the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct.contract.errors import DataError


def validate_inputs(
    predictions: Any,
    references: Any,
    questions: Any = None,
    *,
    files: Mapping[str, str | Path] | None = None,
) -> tuple[dict[str, str], dict[str, list[str]], dict[str, str] | None]:
    """Check ids, types and non-empty references; return plain dicts in prediction order.

    ``files`` maps ``"predictions"``/``"references"``/``"questions"`` to the file each came
    from, only to name it in errors. Raises DataError naming the first offending id.
    """
    names = dict(files or {})
    pred = _as_mapping(predictions, "predictions", names)
    refs = _as_mapping(references, "references", names)
    ques = None if questions is None else _as_mapping(questions, "questions", names)
    if not pred:
        raise DataError("no predictions", file=names.get("predictions"))

    for key, text in pred.items():
        _require_string(text, "prediction", names.get("predictions"), key)
        if key not in refs:
            raise DataError("id is in the predictions but not in the references",
                            file=names.get("references"), record=key)
        group = refs[key]
        if isinstance(group, str) or not isinstance(group, Sequence):
            raise DataError(f"references must be a list of strings, got {type(group).__name__}",
                            file=names.get("references"), record=key)
        if len(group) == 0:
            raise DataError("empty reference list", file=names.get("references"), record=key)
        for i, ref in enumerate(group):
            _require_string(ref, f"reference {i}", names.get("references"), key)
        if ques is not None:
            if key not in ques:
                raise DataError("id is in the predictions but not in the questions",
                                file=names.get("questions"), record=key)
            _require_string(ques[key], "question", names.get("questions"), key)
    for what, table in (("references", refs), ("questions", ques)):
        for key in table or {}:
            if key not in pred:
                raise DataError(f"id is in the {what} but not in the predictions",
                                file=names.get(what), record=key)
    return (
        dict(pred),
        {key: list(refs[key]) for key in pred},
        None if ques is None else {key: ques[key] for key in pred},
    )


def _require_string(value: Any, what: str, file: str | Path | None, record: str) -> None:
    if not isinstance(value, str):
        raise DataError(f"{what} must be a string, got {type(value).__name__}", file=file, record=record)


def _as_mapping(obj: Any, what: str, names: Mapping[str, str | Path]) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise DataError(f"{what} must be a JSON object keyed by id, got {type(obj).__name__}",
                        file=names.get(what))
    for key in obj:
        if not isinstance(key, str):
            raise DataError(f"{what} ids must be strings", file=names.get(what), record=key)
    return obj

