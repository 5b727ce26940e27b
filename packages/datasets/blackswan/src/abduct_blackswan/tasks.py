"""``blackswan-mcq`` and ``blackswan-yn``: Detective and Reporter questions, scored as BlackSwan's
own scripts score them (``scoring.py``).

Each reads its repo's dataset (``blackswan-mcq``, ``blackswan-yn``; ``--split validation`` by
default, or ``test``) and plans one stage over its questions (``--limit`` counts questions):

- a model that **scores** gets a ``Choose``: the three options (MCQ), or ``yes`` and ``no``
  (Y/N), each scored given the clips and the question; the highest wins, ties to the first;
- a model that **generates** (``answer=auto``, the default, when it can; or ``answer=generate``)
  is asked the question with the options as letters (MCQ) or for yes or no (Y/N), and its answer
  is read by the official parsers (``parsing.py``): an unreadable answer is wrong and counted in
  ``unparsed``. ``answer=score`` makes a model that does both score. ``random`` generates (a
  pick from the letters, or from yes and no), so its row is the chance row either way.

What the model sees is ``inputs.py``'s: Detective the pre- and post-event clips (the middle
hidden), Reporter the whole video; ``setup=text`` gives the question alone, the text-only row.
``blackswan-mcq`` writes ``challenge.json`` (the challenge's submission format, ``challenge.py``)
beside results.json, and ``abduct score blackswan-mcq`` scores such a file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from abduct import (
    AbductError,
    Choice,
    Choose,
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
)
from abduct.kit import scored_texts
from abduct.kit.answers import unparsed_reason
from abduct_blackswan import challenge
from abduct_blackswan.inputs import INPUT_OPTIONS, MCQ_PROMPT, SETUPS, YN_PROMPT, Setup, question_input, yn_question
from abduct_blackswan.parsing import LETTERS, letter_list, parse_choice, parse_yes_no
from abduct_blackswan.records import McqQuestion, YnQuestion
from abduct_blackswan.scoring import Answer, metric_info, metrics, units

AnswerMode = Literal["auto", "score", "generate"]
PER_UNIT = 16  # questions a stored unit holds


@dataclass(frozen=True)
class Asked:
    """One question as a model is asked it: the question's text (the scored input's context,
    the start of the generated prompt), the candidates (scored), the prompt (generated), the
    gold index, and how a generated answer is read."""

    question: str
    candidates: tuple[str, ...]
    prompt: str
    label: int | None
    parse: Callable[[str], int | None]


class _QuestionTask:
    default_split = "validation"
    limit_unit = "questions"
    optional_inputs = frozenset({"context"})  # random reads none of it; every model that answers does
    input_options = INPUT_OPTIONS
    chance = 50.0
    pool: tuple[str, ...] = ()  # what a choosing generator (random) picks from
    instruction = ""  # the prompt's last line, after the options
    unanswered: Any = None  # predictions.jsonl's answer for one the parser could not read

    def __init__(self, setup: Setup, answer: AnswerMode) -> None:
        if setup not in SETUPS:
            raise AbductError(f"setup must be one of {', '.join(SETUPS)}, got {setup!r}")
        self.setup: Setup = setup
        self.answer: AnswerMode = answer
        self.metric_info = metric_info(self.chance)

    # what a subclass says of its questions
    def asked(self, question: Any) -> Asked:
        raise NotImplementedError

    def shown(self, index: int | None) -> Any:
        """An answer or label as predictions.jsonl shows it."""
        return index

    def artifacts(self, answers: dict[str, int]) -> dict[str, Any]:
        """Files written beside results.json, from ``{question id: answer index, -1 unparsed}``."""
        return {}

    def described(self, questions: Sequence[Any]) -> dict[str, Any]:
        """What results.json's details add about the questions read."""
        return {}

    # the contract
    def asks(self, run: RunInfo) -> bool:
        """Generation: ``answer=generate``, or ``auto`` with a model that generates."""
        return self.answer == "generate" or (self.answer == "auto" and run.generates)

    def plan(self, questions: Sequence[Any], run: RunInfo) -> list[Stage]:
        if self.asks(run):
            items = [GenerationItem(q.id, GenerationRequest(question_input(q.task, q.clips, None, self.setup),
                                                            self.asked(q).prompt)) for q in questions]
            return [Stage("generate", Generate(items, TextPool.of(self.pool), per_unit=PER_UNIT))]
        choices = [Choice(q.id, question_input(q.task, q.clips, a.question, self.setup), a.candidates, a.label)
                   for q, a in ((q, self.asked(q)) for q in questions)]
        return [Stage("choose", Choose(choices, per_unit=PER_UNIT))]

    def finish(self, questions: Sequence[Any], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        generated = "generate" in records
        found = {str(r.id): r for r in records["generate" if generated else "choose"]}
        predictions, outcomes, answers = [], [], {}
        for q in questions:
            asked, record = self.asked(q), found[q.id]
            reason = None
            if generated:
                index = asked.parse(record.prediction)
                kept = {"output": record.prediction}
                reason = unparsed_reason(record.prediction, parsed=index is not None)
                if reason:
                    kept["unparsed"] = reason
            else:
                index = record.choice
                kept = {"scores": record.scores}
            correct = None if asked.label is None else index == asked.label
            answers[q.id] = -1 if index is None else index
            outcomes.append(Answer(q.id, q.task, q.video, q.difficulty, correct, reason))
            predictions.append({"id": q.id, "q_id": q.q_id, "task": q.task, "difficulty": q.difficulty,
                                "video": q.video, "label": self.shown(asked.label),
                                "answer": self.unanswered if index is None else self.shown(index),
                                "correct": correct, "parsed": index is not None, **kept})
        details: dict[str, Any] = {"answered_by": "generation" if generated else "scores", "setup": self.setup,
                                   **self.described(questions)}
        if generated:
            details["instruction"] = self.instruction
        if all(o.correct is None for o in outcomes):
            details["labels"] = "hidden in this split: only the counts are computed"
        return Evaluation(metrics(outcomes), predictions, details=details, units=units(outcomes),
                          artifacts=self.artifacts(answers))

    def view(self, record: Mapping[str, Any], questions: Mapping[str, Any]) -> dict[str, Any] | None:
        """samples.html: the question, the candidates (with their scores) or the answer given."""
        question = questions.get(str(record.get("id")))
        if question is None:
            return None
        asked = self.asked(question)
        texts = [{"label": f"{question.task} · {question.difficulty or 'difficulty not given'}",
                  "text": asked.question}]
        texts += scored_texts("option" if len(asked.candidates) == 3 else list(asked.candidates), asked.candidates,
                              record.get("scores"), asked.label)
        if "output" in record:
            texts.append({"label": "answer given" + ("" if record.get("parsed") else
                                                     f" (not parsed: {record.get('unparsed', 'no option found')}; wrong)"),
                          "text": str(record["output"])})
        clips = {role: Path(path).name for role, path in
                 (("pre-event", question.clips.pre), ("event", question.clips.event),
                  ("post-event", question.clips.post), ("whole video", question.clips.whole)) if path}
        return {"texts": texts, "correct": record.get("correct"), "category": question.task,
                "fields": {"q_id": question.q_id, "video": question.video, "answer": record.get("answer"), **clips}}


class McqTask(_QuestionTask):
    """Three options, one right; chance 33.3 %."""

    dataset = "blackswan-mcq"
    chance = 100.0 / 3
    pool = LETTERS
    instruction = MCQ_PROMPT
    unanswered = -1  # as the challenge file has it

    def asked(self, question: McqQuestion) -> Asked:
        options = question.options
        return Asked(question.question, options, f"{question.question}\n{letter_list(options)}\n{MCQ_PROMPT}",
                     question.label, lambda text: parse_choice(text, options))

    def artifacts(self, answers: dict[str, int]) -> dict[str, Any]:
        return {challenge.CHALLENGE: answers}

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        """A submission file (``challenge.py``), or a run's predictions.jsonl, against a split with
        labels: ``--answer-key`` is the validation file, its repo's folder, or the data folder (then
        its validation file)."""
        from abduct_blackswan.dataset import BlackSwanRepo
        from abduct_blackswan.loader import load_mcq

        key = Path(answer_key)
        if key.is_dir():
            questions = BlackSwanRepo("MCQ", load_mcq).load(key, "validation")
        else:  # read as a test file is (labels given or hidden), so a hidden one gets the line below
            questions = load_mcq(key, key.parent, "test")
        if any(q.label is None for q in questions):
            raise AbductError(f"{key}: the answer key hides its labels; score a split with labels (validation)")
        challenge.require_run(predictions, "validation")
        answers = challenge.read_challenge(predictions, [q.id for q in questions])
        return metrics([Answer(q.id, q.task, q.video, q.difficulty, answers[q.id] == q.label,
                               "no option found" if answers[q.id] == -1 else None) for q in questions])


class YnTask(_QuestionTask):
    """Yes or no; chance 50 %."""

    dataset = "blackswan-yn"
    pool = ("yes", "no")
    instruction = YN_PROMPT

    def asked(self, question: YnQuestion) -> Asked:
        label = None if question.label is None else (0 if question.label else 1)
        asked = yn_question(question.task, question.hypothesis, question.question)
        return Asked(asked, ("yes", "no"), f"{asked}\n{YN_PROMPT}", label,
                     lambda text: {True: 0, False: 1, None: None}[parse_yes_no(text)])

    def shown(self, index: int | None) -> Any:
        return None if index is None else ("yes", "no")[index]

    def described(self, questions: Sequence[Any]) -> dict[str, Any]:
        layout = next((q.layout for q in questions if q.layout is not None), None)
        return {} if layout is None else {"fields": layout.describe()}  # the Y/N file's layout, as found on it


def make_mcq(spec: Spec, settings: Settings, *, setup: Setup = "video", answer: AnswerMode = "auto") -> McqTask:
    """``blackswan-mcq[,setup=video|text][,answer=auto|score|generate]``."""
    return McqTask(setup, answer)


def make_yn(spec: Spec, settings: Settings, *, setup: Setup = "video", answer: AnswerMode = "auto") -> YnTask:
    """``blackswan-yn[,setup=video|text][,answer=auto|score|generate]``."""
    return YnTask(setup, answer)
