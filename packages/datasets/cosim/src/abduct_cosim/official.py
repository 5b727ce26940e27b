"""CoSIm's choice in the authors' arithmetic, beside abduct's full-precision one.

The released code (``src/pretrain/cosim_train.py``, ``evaluate_epoch``) picks
``logit.max(1)`` over the model's float32 logits: the four scores are compared as float32,
ties going to the first maximal index. A float64 score is rounded to float32 first, so scores
closer than float32's resolution (about 6e-8 relative), tiny ones (below 1.4e-45, float64's
subnormals included, they round to 0; below 1.2e-38 float32 keeps fewer bits) and ones beyond
+-3.4e38 (they round to +-inf) can tie there although they differ.
``abduct score cosim`` and ``abduct eval cosim`` report the official choice; where the two
arithmetics choose differently, one warning says how many records, gives the full-precision
accuracy beside the official one and the fix, and the output keeps it under
``full_precision``. +-inf scores are compared as they are in both (a -inf choice is never
picked over a finite one); NaN is refused when the predictions are read.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from abduct import Chosen
from abduct_cosim.breakdown import breakdowns
from abduct_cosim.records import CosimRecord

FIX = ("subtract each record's largest finite score from its scores and divide them by the largest magnitude left, "
       "so that float32 keeps distinct scores apart")


class OfficialArithmeticWarning(UserWarning):
    """The authors' float32 comparison picks another choice than full precision."""


def official_choice(scores: Sequence[float]) -> int:
    """The index the authors' code picks: the first maximum of the scores as float32."""
    with np.errstate(over="ignore"):
        return int(np.argmax(np.asarray(scores, dtype=np.float64).astype(np.float32)))


def full_choice(scores: Sequence[float]) -> int:
    """The index full precision picks, as abduct's ``Choose`` does: the first maximum of the float64 scores."""
    return int(np.argmax(np.asarray(scores, dtype=np.float64)))


def gold_margin(scores: Sequence[float], gold: int) -> float | None:
    """The gold's score minus the best other one: above 0 when the model ranks the gold first
    (None without another score or a gold among them)."""
    others = [s for i, s in enumerate(scores) if i != gold]
    return float(scores[gold] - max(others)) if others and 0 <= gold < len(scores) else None


def official_answers(answers: Mapping[str, Chosen]) -> dict[str, dict[str, Any]]:
    """The records of a ``Choose`` stage as prediction lines, ``choice`` and ``correct`` in the
    official arithmetic, and the full-precision choice as ``full_precision_choice`` where it differs."""
    out = {}
    for key, answer in answers.items():
        official, full = official_choice(answer.scores), full_choice(answer.scores)
        row = {**asdict(answer), "choice": official, "correct": official == answer.label}
        if official != full:
            row["full_precision_choice"] = full
        out[key] = row
    return out


def summary(answers: Sequence[Mapping[str, Any]], where: str) -> dict[str, Any]:
    """``{"full_precision": {"accuracy": ...}}`` and one warning naming ``where`` when some
    answer's official choice (``choice``) differs from its full-precision one
    (``full_precision_choice``); empty otherwise."""
    differ = sum("full_precision_choice" in a for a in answers)
    if not differ:
        return {}
    official = 100.0 * sum(a["choice"] == a["label"] for a in answers) / len(answers)
    full = 100.0 * sum(a.get("full_precision_choice", a["choice"]) == a["label"] for a in answers) / len(answers)
    warnings.warn(f"{where}: the official arithmetic picks another choice on {differ} of {len(answers)} records (the "
                  "authors' code compares the four scores as float32, where gaps below its resolution, subnormal "
                  "values and values beyond +-3.4e38 tie, the first choice winning): accuracy "
                  f"{official:.4f} (official), {full:.4f} (full precision). To make them agree, {FIX}",
                  OfficialArithmeticWarning, stacklevel=2)
    return {"full_precision": {"accuracy": full}}


def score_choices(records: Sequence[CosimRecord], scores: Mapping[int, Sequence[float]], where: str) -> dict[str, Any]:
    """``abduct score cosim``'s output: accuracy, ``n`` and the breakdowns of the official
    choices, with ``full_precision`` (and the warning) where the arithmetics choose differently."""
    answers = official_answers({str(r.index): Chosen(str(r.index), list(scores[r.index]), full_choice(scores[r.index]),
                                                     r.label, None) for r in records})  # choice, correct: official
    figures = breakdowns(records, {r.index: answers[str(r.index)]["correct"] for r in records})
    return {**figures, **summary(list(answers.values()), where)}
