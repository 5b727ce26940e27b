"""The two example tasks, each one stage of one of the core's request kinds.

A task declares; the runner drives. It names the registered ``dataset`` it reads (the runner
builds it with the user's ``--dataset`` options, loads the split and applies ``--limit``),
``plan``s the run as named stages of requests, and ``finish``es it: metrics and per-sample
records from the stages' records. The runner executes each request through the model's
engines, unit by unit, so an interrupted run resumes; the task never sees the model.

- ``example-colors`` (scoring): which of four colour names fits the image? One ``Choose``
  stage: the model scores every candidate, the argmax is picked (ties to the first maximal
  index); ``accuracy`` averages the records. ``view`` shows a record in samples.html.
- ``example-describe`` (generation): write the name of the image's colour. One ``Generate``
  stage; ``finish`` scores the texts with ``exact-match`` through ``score_generations``. The
  task offers the four colour names as a ``TextPool``, so the built-in ``random`` model (which
  picks from a pool) gives the chance row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import (
    COUNT,
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
    VisualInput,
    percent,
)
from abduct.kit import accuracy, exact_match, read_json, score_generations, scored_texts, validate_inputs
from abduct_plugin_example.data import COLORS, ChoiceQuestion, NamedQuestion, read_key

PROMPT = "Which colour dominates this image? Answer with one word."


class ColorTask:
    """``example-colors``: 4-way multiple choice, accuracy in percent."""

    default_split = "test"
    dataset = "example-colors"  # the registered dataset the runner loads: ChoiceQuestion examples
    limit_unit = "questions"  # what --limit counts, as results.json says
    metric_info = {"accuracy": percent(chance=25.0), "n": COUNT}  # which way is better, and chance (1 in 4)

    def plan(self, questions: Sequence[ChoiceQuestion], run: RunInfo) -> list[Stage]:
        items = [Choice(q.id, VisualInput(str(q.image)), q.choices, q.label) for q in questions]
        return [Stage("questions", Choose(items, per_unit=8))]  # the stage's name keys its stored units

    def finish(self, questions: Sequence[ChoiceQuestion], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = records["questions"]  # a Chosen per question: .scores, .choice, .correct
        return Evaluation({"accuracy": accuracy(answers), "n": len(answers)}, answers)

    def view(self, record: Mapping[str, Any], questions: Mapping[str, ChoiceQuestion]) -> dict[str, Any]:
        """What samples.html shows of a record: its picture, and each choice with its score and rank."""
        question = questions[record["id"]]
        return {"images": [{"path": str(question.image), "caption": question.id}],
                "texts": scored_texts("choice", question.choices, record["scores"], record["label"])}

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        """Official format: ``{id: choice index}`` against ``answers.json``."""
        key = read_key(answer_key, int, "an integer choice index")
        preds = read_json(predictions, "predictions")
        if not isinstance(preds, dict):
            raise DataError("expected a JSON object {id: choice index}", file=predictions)
        for qid in key:
            if not isinstance(preds.get(qid), int):
                raise DataError("missing or not an integer choice", file=predictions, record=qid)
        unknown = sorted(set(preds) - set(key))
        if unknown:
            raise DataError("id not in the answer key", file=predictions, record=unknown[0])
        return {"accuracy": accuracy([{"correct": preds[q] == key[q]} for q in key])}


class DescribeTask:
    """``example-describe``: generate the colour's name; exact match in percent."""

    default_split = "test"
    dataset = "example-describe"  # NamedQuestion examples: the questions with colors.json
    limit_unit = "questions"
    metric_info = {"exact_match": percent(chance=25.0), "n": COUNT}  # random picks one of 4 names

    def plan(self, questions: Sequence[NamedQuestion], run: RunInfo) -> list[Stage]:
        items = [GenerationItem(q.id, GenerationRequest(VisualInput(str(q.image)), PROMPT), (q.color,))
                 for q in questions]
        return [Stage("describe", Generate(items, pool=TextPool.of(list(COLORS)), per_unit=8))]

    def finish(self, questions: Sequence[NamedQuestion], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        described = records["describe"]  # a Generated per question: .prediction
        scores = score_generations(run, described, {"exact-match": {}})  # {"exact-match": percent}
        return Evaluation({"exact_match": scores["exact-match"], "n": len(described)}, described)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        """Official format: ``{id: text}`` against ``colors.json`` (``{id: colour name}``)."""
        key = read_key(answer_key, str, "a colour name")
        preds, refs, _ = validate_inputs(read_json(predictions, "predictions"), {k: [v] for k, v in key.items()},
                                         files={"predictions": predictions, "references": answer_key})
        return {"exact_match": 100.0 * sum(exact_match(preds[k], refs[k]) for k in preds) / len(preds)}


def make_colors(spec: Spec, settings: Settings) -> ColorTask:
    return ColorTask()


def make_describe(spec: Spec, settings: Settings) -> DescribeTask:
    return DescribeTask()
