"""``visualriddles-mcq``: five options, one of them "cannot determine", scored as the paper's Table 2.

**The options, found on the file.** The release gives each riddle's options inside one prompt
text (column ``prompt_clean-multiple_choice``), labelled ``(A)`` ... ``(E)``. ``options`` reads
them: each option runs from its label to the next label (the last to the end of its line);
the five labels must each appear once, in order. The gold option is the one whose text is the
riddle's ``ground_truth_answer`` (case, surrounding space, runs of space and a final period
ignored); the cannot-determine option is the one whose text says "cannot determine". A prompt
where any of this fails is one line naming the row and what was found: the option order, and
whether the gold can be the cannot-determine option, are not documented, so they are read on
each row and never assumed.

**Asking.** A model that generates (``answer=auto`` with one, or ``answer=generate``) is asked
abduct's prompt (``PROMPT``: the question, the setup's hint or attribution line, the options as
the file orders them, and an instruction to answer with a letter; the official prompt text is
not published) with the image, or without it (``setup=text``, the text-only baseline). A model
that scores gets the five options as a ``Choose`` given the image and the question (ties to the
first). ``random`` picks a letter: the chance row (20 %).

**Reading a letter** (``parse_letter``): the answer, stripped of a leading ``Answer:``, is a
capital letter A-E alone (``B``, ``(B)``, ``B.``, ``B)``), or starts with ``(B)``, ``B.``,
``B)`` or ``B:`` and a space. Anything else is unparsed: wrong, counted in N, and reported
with its reason (``abduct.kit.answers``; "several options" when two labels are named).

**Figures** (x100, N = the riddles asked): ``accuracy`` = correct / N (a cannot-determine
answer is wrong unless it is the gold); ``cannot_determine`` = answers choosing it / N;
``accuracy_without_cd`` = correct / (N - answers choosing it), absent when every answer chose
it. These reproduce every row of the paper's Table 2 (38 / (1 - 0.20) = 47.5 -> 48, ...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from abduct import (
    COUNT,
    AbductError,
    Choice,
    Choose,
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
    percent,
    reference,
)
from abduct.kit import scored_texts
from abduct.kit.answers import UNPARSED_INFO, unparsed_metrics, unparsed_reason
from abduct_visualriddles.records import SETUPS, Riddle, Setup, with_setup

LETTERS = ("A", "B", "C", "D", "E")
TASK = "visualriddles-mcq"
CD_TEXT = "cannot determine"
PROMPT = "{context}{question}\n{options}\nAnswer with the letter of one option only."
PER_UNIT = 16
_LABEL = re.compile(r"\(([A-E])\)")
_ALONE = re.compile(r"^\(?([A-E])\)?[.)]?$")
_LEADING = re.compile(r"^(?:\(([A-E])\)|([A-E])[.):])\s")
AnswerMode = Literal["auto", "score", "generate"]


@dataclass(frozen=True)
class Options:
    """A riddle's five options as the file orders them; ``gold`` and ``cd`` are 0-based indices."""

    texts: tuple[str, ...]
    gold: int
    cd: int


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold().rstrip(".").strip()


def options(riddle: Riddle) -> Options:
    """The riddle's options (module docstring); one line naming the row when they cannot be read."""
    prompt = riddle.cell("mcq", TASK)
    column = riddle.layout.column("mcq", TASK)

    def refused(message: str) -> DataError:
        return DataError(message, file=riddle.layout.file, record=f"row {riddle.row} ({riddle.id})", field=column)

    labels = list(_LABEL.finditer(prompt))
    found = [m.group(1) for m in labels]
    if found != list(LETTERS):
        raise refused(f"expected the option labels (A) to (E) once each, in order; found {found or 'none'}")
    texts = []
    for k, match in enumerate(labels):
        end = labels[k + 1].start() if k + 1 < len(labels) else len(prompt)
        text = prompt[match.end():end]
        texts.append((text if k + 1 < len(labels) else text.split("\n", 1)[0]).strip())
    gold = [k for k, t in enumerate(texts) if _norm(t) == _norm(riddle.answer)]
    cds = [k for k, t in enumerate(texts) if CD_TEXT in _norm(t)]
    if len(gold) != 1:
        raise refused(f"{len(gold)} of the five options are the ground_truth_answer (expected one)")
    if len(cds) != 1:
        raise refused(f"{len(cds)} of the five options say '{CD_TEXT}' (expected one)")
    return Options(tuple(texts), gold[0], cds[0])


def parse_letter(text: str) -> int | None:
    """The 0-based option a generated answer names, or None (module docstring)."""
    answer = text.strip()
    if answer.lower().startswith("answer:"):
        answer = answer[len("answer:"):].strip()
    match = _ALONE.match(answer) or _LEADING.match(answer)
    if match is None:
        return None
    return LETTERS.index(next(g for g in match.groups() if g))


def several(text: str) -> bool:
    return len(set(_LABEL.findall(text))) > 1


def mcq_values(rows: Sequence[tuple[int | None, int, int]]) -> dict[str, Any]:
    """``rows``: (chosen or None, gold, cannot-determine index) per riddle; the Table 2 figures."""
    n = len(rows)
    correct = sum(1 for chosen, gold, _ in rows if chosen == gold)
    cd = sum(1 for chosen, _, cd_index in rows if chosen == cd_index)
    out: dict[str, Any] = {"accuracy": 100.0 * correct / n if n else 0.0,
                           "cannot_determine": 100.0 * cd / n if n else 0.0, "n": n}
    if n > cd:
        out["accuracy_without_cd"] = 100.0 * correct / (n - cd)
    return out


class McqTask:
    dataset = "visualriddles"
    default_split = "test"
    limit_unit = "riddles"
    optional_inputs = frozenset({"context"})
    metric_info = {"accuracy": percent(chance=20.0), "accuracy_without_cd": percent(chance=20.0),
                   "cannot_determine": reference(0.0, 100.0), "n": COUNT, **UNPARSED_INFO}

    def __init__(self, setup: Setup = "plain", answer: AnswerMode = "auto", image: bool = True) -> None:
        if setup not in SETUPS:
            raise AbductError(f"{TASK}: setup must be one of {', '.join(SETUPS)}, got {setup!r}")
        self.setup: Setup = setup
        self.answer: AnswerMode = answer
        self.image = image

    def asks(self, run: RunInfo) -> bool:
        return self.answer == "generate" or (self.answer == "auto" and run.generates)

    def prompt(self, riddle: Riddle, opts: Options) -> str:
        context = riddle.context(self.setup, f"{TASK},setup={self.setup}")
        listed = "\n".join(f"({letter}) {text}" for letter, text in zip(LETTERS, opts.texts))
        return PROMPT.format(context=f"{context}\n" if context else "", question=riddle.question, options=listed)

    def _kept(self, riddles: Sequence[Riddle]) -> tuple[list[Riddle], list[str]]:
        return with_setup(riddles, self.setup, f"{TASK},setup={self.setup}")

    def plan(self, riddles: Sequence[Riddle], run: RunInfo) -> list[Stage]:
        read = [(r, options(r)) for r in self._kept(riddles)[0]]
        if self.asks(run):
            items = [GenerationItem(r.id, GenerationRequest(r.visual(self.image), self.prompt(r, o))) for r, o in read]
            return [Stage("generate", Generate(items, TextPool.of(LETTERS), per_unit=PER_UNIT))]
        choices = []
        for r, o in read:
            context = r.context(self.setup, f"{TASK},setup={self.setup}")
            visual = r.visual(self.image, f"{context}\n{r.question}" if context else r.question)
            choices.append(Choice(r.id, visual, o.texts, o.gold))
        return [Stage("choose", Choose(choices, per_unit=PER_UNIT))]

    def finish(self, riddles: Sequence[Riddle], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        generated = "generate" in records
        found = {str(r.id): r for r in records["generate" if generated else "choose"]}
        kept, without = self._kept(riddles)
        rows, predictions, reasons = [], [], []
        for riddle in kept:
            opts, record = options(riddle), found[riddle.id]
            extra: dict[str, Any]
            if generated:
                chosen = parse_letter(record.prediction)
                reason = unparsed_reason(record.prediction, parsed=chosen is not None,
                                         several=several(record.prediction))
                reasons.append(reason)
                extra = {"output": record.prediction, **({"unparsed": reason} if reason else {})}
            else:
                chosen, extra = record.choice, {"scores": record.scores}
            rows.append((chosen, opts.gold, opts.cd))
            predictions.append({"id": riddle.id, "answer": None if chosen is None else LETTERS[chosen],
                                "gold": LETTERS[opts.gold], "cannot_determine": LETTERS[opts.cd],
                                "correct": chosen == opts.gold, "chose_cd": chosen == opts.cd, **extra})
        metrics = mcq_values(rows)
        if generated:
            metrics.update(unparsed_metrics(reasons))
        units = {"accuracy": UnitScores.means("riddle", {p["id"]: p["correct"] for p in predictions}),
                 "cannot_determine": UnitScores.means("riddle", {p["id"]: p["chose_cd"] for p in predictions})}
        if "accuracy_without_cd" in metrics:
            units["accuracy_without_cd"] = UnitScores.ratio("riddle", {
                p["id"]: (float(p["correct"]), float(not p["chose_cd"])) for p in predictions})
        details: dict[str, Any] = {
            "answered_by": "generation" if generated else "scores", "setup": self.setup, "image": self.image,
            "conditions": {"setup": self.setup, **({} if self.image else {"image": "none"})},
            "columns": riddles[0].layout.describe() if riddles else {}}
        if generated:
            details["prompt"] = PROMPT
        if self.setup != "plain":
            details[f"riddles_without_{self.setup}"] = len(without)
        return Evaluation(metrics, predictions, details=details, units=units)

    def view(self, record: Mapping[str, Any], riddles: Mapping[str, Riddle]) -> dict[str, Any] | None:
        """samples.html: the image, the question, the options (with scores), the answer given."""
        riddle = riddles.get(str(record.get("id")))
        if riddle is None:
            return None
        opts = options(riddle)
        names = [f"({letter})" + (" cannot determine" if k == opts.cd else "") for k, letter in enumerate(LETTERS)]
        texts = [{"label": "question", "text": riddle.question}]
        texts += scored_texts(names, opts.texts, record.get("scores"), opts.gold)
        if "output" in record:
            texts.append({"label": "answer given" + (f" (not parsed: {record['unparsed']}; wrong)"
                                                     if record.get("unparsed") else ""), "text": str(record["output"])})
        return {"images": [{"path": riddle.image, "caption": riddle.id}], "texts": texts,
                "correct": record.get("correct"), "category": riddle.optional("category") or None,
                "fields": {"answer": record.get("answer"), "gold": record.get("gold")}}

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        raise AbductError(f"{TASK} has no official prediction-file format: run it with abduct eval")


def make_mcq(spec: Spec, settings: Settings, *, setup: Setup = "plain", answer: AnswerMode = "auto",
             image: bool = True) -> McqTask:
    """``visualriddles-mcq[,setup=plain|hint|attribution][,answer=auto|score|generate][,image=false]``
    (``image=false``: the text-only baseline, the question and options without the picture)."""
    return McqTask(setup, answer, image)
