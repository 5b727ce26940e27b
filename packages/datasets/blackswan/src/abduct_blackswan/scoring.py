"""BlackSwan's accuracy, as the official scripts compute it, and the units behind it.

- ``accuracy`` is **pooled**: right answers over all questions, Detective and Reporter
  together, not the mean of the two tasks' accuracies (the official scripts sum the counts, and
  every challenge leaderboard row is such a weighted mix);
- ``detective_accuracy``, ``reporter_accuracy``: over that task's questions (the leaderboard's
  ``Detective_Accuracy`` and ``Reporter_Accuracy``), scored by each question's ``task`` field;
- ``by_difficulty.<easy|medium|hard>``: accuracy and count per difficulty (the video's, shared
  by all its questions), where the file gives one;
- an answer that could not be parsed counts as wrong and in the total, and is counted in
  ``unparsed`` (``unparsed_rate``, ``unparsed_reasons``: ``abduct.kit.answers``; the official
  parsers take the first option named, so "several options" never occurs here; a submission
  file's -1 is "no option found"); ``n``, ``n_detective``, ``n_reporter``: the questions.

Without labels (the test split) only the counts are given. Each question is a unit of the
accuracies (their intervals and paired tests), clustered by its video: a video's questions
share clips and often distractors, so they are resampled together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from abduct import COUNT, MetricInfo, UnitScores, percent
from abduct.kit.answers import UNPARSED_INFO, unparsed_metrics
from abduct_blackswan.records import DIFFICULTIES

TASKS = ("Detective", "Reporter")


@dataclass(frozen=True)
class Answer:
    """One question's outcome: ``correct`` None without a label; ``unparsed`` why the parser
    could not read the answer (then ``correct`` is False where there is a label), None when it could."""

    id: str
    task: str
    video: str
    difficulty: str | None
    correct: bool | None
    unparsed: str | None = None

    @property
    def parsed(self) -> bool:
        return self.unparsed is None


def _percent(answers: Sequence[Answer]) -> float:
    return 100.0 * sum(bool(a.correct) for a in answers) / len(answers)


def metrics(answers: Sequence[Answer]) -> dict[str, Any]:
    """The task's metrics (see the module docstring)."""
    labelled = [a for a in answers if a.correct is not None]
    out: dict[str, Any] = {}
    if labelled:
        out["accuracy"] = _percent(labelled)
        for task in TASKS:
            mine = [a for a in labelled if a.task == task]
            if mine:
                out[f"{task.lower()}_accuracy"] = _percent(mine)
        levels = {level: [a for a in labelled if a.difficulty == level] for level in DIFFICULTIES}
        if any(levels.values()):
            out["by_difficulty"] = {level: {"accuracy": _percent(found), "n": len(found)}
                                    for level, found in levels.items() if found}
    out["n"] = len(answers)
    for task in TASKS:
        out[f"n_{task.lower()}"] = sum(a.task == task for a in answers)
    out.update(unparsed_metrics([a.unparsed for a in answers]))
    return out


def units(answers: Sequence[Answer]) -> dict[str, UnitScores]:
    """The questions behind each accuracy, clustered by video."""
    labelled = [a for a in answers if a.correct is not None]
    if not labelled:
        return {}
    video = {a.id: a.video for a in labelled}

    def of(chosen: Sequence[Answer]) -> UnitScores:
        return UnitScores.means("question", {a.id: bool(a.correct) for a in chosen}).clustered("video", video)

    out = {"accuracy": of(labelled)}
    for task in TASKS:
        mine = [a for a in labelled if a.task == task]
        if mine:
            out[f"{task.lower()}_accuracy"] = of(mine)
    levels = {a.id: a.difficulty for a in labelled if a.difficulty is not None}
    if levels:
        out.update(out["accuracy"].breakdown("accuracy", {"by_difficulty": levels}))
    return out


def metric_info(chance: float) -> dict[str, MetricInfo]:
    accuracy = percent(chance=chance)
    return {"accuracy": accuracy, "detective_accuracy": accuracy, "reporter_accuracy": accuracy,
            "by_difficulty.*.accuracy": accuracy, "by_difficulty.*.n": COUNT, "n": COUNT, "n_detective": COUNT,
            "n_reporter": COUNT, **UNPARSED_INFO}
