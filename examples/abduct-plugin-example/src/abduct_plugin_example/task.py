"""The two example tasks, each written with one of the core's shared shapes.

- ``example-colors`` (scoring): which of four colour names fits the image? The core's
  ``multiple_choice`` scores every candidate, picks the argmax (ties to the first maximal
  index) and resumes an interrupted run; ``accuracy`` averages the records.
- ``example-describe`` (generation): write the name of the image's colour. The core's
  ``generate`` asks the model for one text per image, ``score_generations`` scores them with
  ``exact-match`` through ``run.metric``. The task offers the four colour names as a
  ``TextPool``, so the built-in ``random`` model (which picks from a pool) gives the chance row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from abduct import (
    COUNT,
    DataError,
    Evaluation,
    GenerationRequest,
    RunContext,
    Settings,
    Spec,
    TextPool,
    VisualInput,
    percent,
)
from abduct.kit import (
    Choice,
    ExactMatch,
    GenerationItem,
    accuracy,
    generate,
    multiple_choice,
    read_json,
    score_generations,
    validate_inputs,
)
from abduct_plugin_example.data import ANSWERS, COLORS, NAMES, QUESTIONS, load_questions, read_key

PROMPT = "Which colour dominates this image? Answer with one word."


class ColorTask:
    """``example-colors``: 4-way multiple choice, accuracy in percent."""

    default_split = "test"
    metric_info = {"accuracy": percent(chance=25.0), "n": COUNT}  # which way is better, and chance (1 in 4)

    def evaluate(self, run: RunContext) -> Evaluation:
        questions = run.apply_limit(load_questions(run.data_dir), "questions")
        key = read_key(run.data_dir / ANSWERS, int, "an integer choice index")
        missing = [q.qid for q in questions if q.qid not in key]
        if missing:
            raise DataError("question has no answer", file=run.data_dir / ANSWERS, record=missing[0])
        items = [Choice(q.qid, VisualInput(str(q.image)), q.choices, key[q.qid]) for q in questions]
        records = multiple_choice(run, "questions", items, per_unit=8)
        return Evaluation({"accuracy": accuracy(records), "n": len(records)}, records,
                          data_files=[run.data_dir / QUESTIONS, run.data_dir / ANSWERS])

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
    metric_info = {"exact_match": percent(chance=25.0), "n": COUNT}  # random picks one of 4 names

    def evaluate(self, run: RunContext) -> Evaluation:
        questions = run.apply_limit(load_questions(run.data_dir), "questions")
        names = read_key(run.data_dir / NAMES, str, "a colour name")
        missing = [q.qid for q in questions if q.qid not in names]
        if missing:
            raise DataError("question has no colour name", file=run.data_dir / NAMES, record=missing[0])
        items = [GenerationItem(q.qid, GenerationRequest(VisualInput(str(q.image)), PROMPT), (names[q.qid],))
                 for q in questions]
        records = generate(run, "describe", items, pool=TextPool.of(list(COLORS)), per_unit=8)
        scores = score_generations(run, records, {"exact-match": {}})  # {"exact-match": share in [0, 1]}
        return Evaluation({"exact_match": 100.0 * scores["exact-match"], "n": len(records)}, records,
                          data_files=[run.data_dir / QUESTIONS, run.data_dir / NAMES])

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        """Official format: ``{id: text}`` against ``colors.json`` (``{id: colour name}``)."""
        key = read_key(answer_key, str, "a colour name")
        preds, refs, _ = validate_inputs(read_json(predictions, "predictions"), {k: [v] for k, v in key.items()},
                                         files={"predictions": predictions, "references": answer_key})
        return {"exact_match": 100.0 * float(ExactMatch().compute(preds, refs).corpus["exact_match"])}


def make_colors(spec: Spec, settings: Settings) -> ColorTask:
    return ColorTask()


def make_describe(spec: Spec, settings: Settings) -> DescribeTask:
    return DescribeTask()
