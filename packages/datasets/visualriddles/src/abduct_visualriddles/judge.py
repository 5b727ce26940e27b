"""``visualriddles-judge``: the model under evaluation is the judge; its Yes/No verdicts on the
released model answers are compared with the human labels (the paper's Table 3).

**The data, found on the file.** The release's judge data are three cells per riddle, each a
list encoded as JSON or as a Python literal: the judge prompts with the reference answer
(``prompts_ref_based-auto_eval``), without it (``prompts_ref_free-auto_eval``), and the human
labels (``labels-auto_eval``, earlier ``model_labels-auto_eva``), one prompt and one label per
model answer judged. A file without these columns is refused in one line naming the columns
found (the judge task cannot be reproduced from it); a riddle whose cells are empty is left
out and counted (``riddles_without_judgements`` in details); a list of another length than its
labels', or a label that is not yes/no, true/false or 1/0, is one line naming the row.

**Asking.** Each prompt is given as the file has it (the official judge prompt), with the
riddle's image (``image=false``: without it); ``reference=based`` (default) or ``free`` picks
the column. ``random`` answers Yes or No.

**Reading a verdict** (``parse_verdict``): the answer's first word, ignoring case and
punctuation around it: ``yes`` or ``no`` (the third-party baseline code's rule, which reads
the first word only); anything else is unparsed and counted with its reason.

**Figures** (N = the judged answers): ``accuracy`` = 100 x verdicts equal to the human label /
N (an unparsed verdict is wrong, and counted in N); ``kappa`` = Cohen's κ between the
verdicts and the labels over the same N (``abduct_modelkit.agreement.cohen_kappa``; an unparsed
verdict is its own category, so it is a disagreement there too; absent when κ is undefined,
e.g. one label everywhere); ``judge_yes_rate`` and ``human_yes_rate``; the confusion table
(human label -> verdict -> count) in details.

**Several judges** (Krippendorff's α): each judge model is one run of this task; ``abduct
compare RUN...`` of such runs (the same ``reference=`` and ``image=``) gives α across their
models on the answers every run judged, α with people as one more rater, and each run against
the first: Cohen's κ, the share of equal verdicts and the paired difference of their yes rates.
For that the run's ``details.judge_agreement`` (the model as the judge against people, as a
``--judge`` is shown) declares, under ``across_runs``, the ``verdict`` field of the predictions;
as in κ, an unparsed verdict is a category of its own (``abduct_report.judge_agreement``).
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from abduct import (
    COUNT,
    AbductError,
    DataError,
    Evaluation,
    Generate,
    GenerationItem,
    GenerationRequest,
    Records,
    RunInfo,
    Settings,
    Spec,
    Stage,
    TextPool,
    UnitScores,
    higher,
    percent,
    reference,
)
from abduct.kit.answers import UNPARSED_INFO, unparsed_metrics, unparsed_reason
from abduct_visualriddles.records import Riddle

TASK = "visualriddles-judge"
PER_UNIT = 16
Reference = Literal["based", "free"]
_FIRST = re.compile(r"^[\W_]*(yes|no)\b", re.IGNORECASE)
_LABELS = {"yes": True, "true": True, "1": True, "no": False, "false": False, "0": False}
UNPARSED = "unparsed"  # the category an unread verdict has in the confusion table and in κ
SCORES = {"yes": 100.0, "no": 0.0, UNPARSED: 0.0}  # a judge's score: its percent of yes (judge_yes_rate)


@dataclass(frozen=True)
class _Item:
    """A judged answer as ``judge_agreement`` reads a judge's record (the verdict comes by id)."""

    id: str


@dataclass(frozen=True)
class Judgement:
    """One released model answer to judge: its prompt and the human label (True: correct)."""

    id: str
    riddle: Riddle
    prompt: str
    human: bool


def _decoded(riddle: Riddle, role: str) -> list[Any] | None:
    """The list a judge cell encodes (None: an empty cell)."""
    column = riddle.layout.column(role, TASK)
    text = riddle.cells[column].strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
    if not isinstance(value, list):
        raise DataError(f"expected a list (JSON or a Python literal), got {type(value).__name__}: {text[:60]!r}",
                        file=riddle.layout.file, record=f"row {riddle.row} ({riddle.id})", field=column)
    return value


def _label(value: Any, riddle: Riddle, k: int) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _LABELS:
        return _LABELS[value.strip().lower()]
    raise DataError(f"label {k + 1} is {value!r}, not yes/no, true/false or 1/0", file=riddle.layout.file,
                    record=f"row {riddle.row} ({riddle.id})", field=riddle.layout.column("judge_labels", TASK))


def judgements(riddles: Sequence[Riddle], ref: Reference) -> tuple[list[Judgement], list[str]]:
    """The answers to judge, and the ids of the riddles without any (empty cells)."""
    out, without = [], []
    for riddle in riddles:
        prompts = _decoded(riddle, f"judge_{ref}")
        labels = _decoded(riddle, "judge_labels")
        if not prompts or not labels:
            without.append(riddle.id)
            continue
        if len(prompts) != len(labels):
            raise DataError(f"{len(prompts)} prompts and {len(labels)} labels", file=riddle.layout.file,
                            record=f"row {riddle.row} ({riddle.id})")
        for k, (prompt, label) in enumerate(zip(prompts, labels)):
            if not isinstance(prompt, str) or not prompt.strip():
                raise DataError(f"prompt {k + 1} is not a text", file=riddle.layout.file,
                                record=f"row {riddle.row} ({riddle.id})",
                                field=riddle.layout.column(f"judge_{ref}", TASK))
            out.append(Judgement(f"{riddle.id}/{k}", riddle, prompt, _label(label, riddle, k)))
    return out, without


def parse_verdict(text: str) -> bool | None:
    """True for yes, False for no (the first word), None otherwise."""
    match = _FIRST.match(text.strip())
    return None if match is None else match.group(1).lower() == "yes"


def _name(verdict: bool | None) -> str:
    return UNPARSED if verdict is None else ("yes" if verdict else "no")


def judge_values(pairs: Sequence[tuple[bool | None, bool]]) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """``pairs``: (verdict or None, human label) per judged answer; the figures and the
    confusion table ``{human: {verdict: count}}`` (module docstring)."""
    from abduct_modelkit.agreement import cohen_kappa, confusion

    verdicts = [_name(v) for v, _ in pairs]
    humans = [_name(h) for _, h in pairs]
    n = len(pairs)
    out: dict[str, Any] = {"n": n}
    if n:
        out["accuracy"] = 100.0 * sum(v == h for v, h in zip(verdicts, humans)) / n
        out["judge_yes_rate"] = 100.0 * verdicts.count("yes") / n
        out["human_yes_rate"] = 100.0 * humans.count("yes") / n
        kappa = cohen_kappa(verdicts, humans)
        if not math.isnan(kappa):
            out["kappa"] = kappa
    return out, confusion(verdicts, humans) if n else {}


class JudgeTask:
    dataset = "visualriddles"
    default_split = "test"
    limit_unit = "riddles"
    optional_inputs = frozenset({"context"})
    metric_info = {"accuracy": percent(), "kappa": higher(-1.0, 1.0, chance=0.0), "judge_yes_rate": reference(0, 100),
                   "human_yes_rate": reference(0, 100), "n": COUNT, **UNPARSED_INFO}

    def __init__(self, reference: Reference = "based", image: bool = True) -> None:
        if reference not in ("based", "free"):
            raise AbductError(f"{TASK}: reference must be based or free, got {reference!r}")
        self.reference: Reference = reference
        self.image = image

    def plan(self, riddles: Sequence[Riddle], run: RunInfo) -> list[Stage]:
        found, _ = judgements(riddles, self.reference)
        if not found:
            raise AbductError(f"{TASK}: none of the {len(riddles)} riddles has judge prompts and labels")
        items = [GenerationItem(j.id, GenerationRequest(j.riddle.visual(self.image), j.prompt)) for j in found]
        return [Stage("judge", Generate(items, TextPool.of(["Yes", "No"]), per_unit=PER_UNIT))]

    def finish(self, riddles: Sequence[Riddle], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        found, without = judgements(riddles, self.reference)
        made = {str(r.id): r for r in records["judge"]}
        pairs, reasons, predictions = [], [], []
        for j in found:
            output = made[j.id].prediction
            verdict = parse_verdict(output)
            reason = unparsed_reason(output, parsed=verdict is not None)
            reasons.append(reason)
            pairs.append((verdict, j.human))
            predictions.append({"id": j.id, "riddle": j.riddle.id, "verdict": _name(verdict), "human": _name(j.human),
                                "correct": verdict == j.human, "output": output,
                                **({"unparsed": reason} if reason else {})})
        metrics, table = judge_values(pairs)
        metrics.update(unparsed_metrics(reasons))
        details: dict[str, Any] = {
            "reference": self.reference, "image": self.image, "confusion": table,
            "confusion_reads": "human label -> judge verdict -> count",
            "conditions": {"reference": self.reference, **({} if self.image else {"image": "none"})},
            "riddles_without_judgements": len(without), "verdict": "first word yes/no, any case"}
        details["judge_agreement"] = self.agreement(predictions, run)
        units = {"accuracy": UnitScores.means("judged answer", {p["id"]: p["correct"] for p in predictions})
                 .clustered("riddle", {p["id"]: p["riddle"] for p in predictions})}
        return Evaluation(metrics, predictions, details=details, units=units)

    def agreement(self, predictions: Sequence[Mapping[str, Any]], run: RunInfo) -> dict[str, Any]:
        """The model as the judge against people (the figures above, as report.html and compare
        show a judge), declaring its verdicts comparable across runs judged alike: ``abduct
        compare`` of several runs gives α across their models (module docstring)."""
        from abduct_modelkit.agreement import judge_agreement

        verdicts = {p["id"]: p["verdict"] for p in predictions}
        block = judge_agreement([_Item(p["id"]) for p in predictions], {p["id"]: p["human"] for p in predictions},
                                label=lambda item: verdicts[item.id], score=lambda label: SCORES[str(label)], first="model",
                                seed=run.settings.seed)
        block["across_runs"] = {"label": "verdict", "people": "human", "scores": SCORES,
                                "judged": {"task": TASK, "reference": self.reference, "image": self.image}}
        return block

    def view(self, record: Mapping[str, Any], riddles: Mapping[str, Riddle]) -> dict[str, Any] | None:
        riddle = riddles.get(str(record.get("riddle")))
        if riddle is None:
            return None
        return {"images": [{"path": riddle.image, "caption": riddle.id}],
                "texts": [{"label": "question", "text": riddle.question},
                          {"label": "judge's answer", "text": str(record.get("output", ""))}],
                "correct": record.get("correct"),
                "fields": {"verdict": record.get("verdict"), "human label": record.get("human")}}

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        raise AbductError(f"{TASK} has no official prediction-file format: run it with abduct eval")


def make_judge(spec: Spec, settings: Settings, *, reference: Reference = "based", image: bool = True) -> JudgeTask:
    """``visualriddles-judge[,reference=based|free][,image=false]``."""
    return JudgeTask(reference, image)
