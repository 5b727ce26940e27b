"""The ``cosim`` task: four-way multiple choice, one ``Choose`` stage named ``cosim``.

It reads the registered ``cosim`` dataset. Each choice is scored as a text given
``record.visual(context)``: the image with the context string of ``records.py``
(``question [SEP] answer_orig [SEP] change`` by default). The image and the context are both
optional inputs: an image-only scorer (``clip:tiny``) goes without the context, a text-only
scorer without the image, ``random`` reads neither; what a model went without is listed in
results.json (``inputs.ignored``). ``context=question_change`` and ``context=none`` give the
paper's text-only ablations with any text scorer.

``context`` and ``image_root`` are the dataset's options (``--dataset cosim,context=none``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import (
    COUNT,
    Choice,
    Choose,
    Evaluation,
    MetricInfo,
    Records,
    RunInfo,
    Settings,
    Spec,
    Stage,
    UnitScores,
    percent,
)
from abduct.kit import scored_texts
from abduct_cosim.breakdown import breakdowns, is_yes_no, sentence_bucket
from abduct_cosim.loader import load_file
from abduct_cosim.official import gold_margin, official_answers, score_choices, summary
from abduct_cosim.predictions import load_predictions
from abduct_cosim.records import ContextMode, CosimRecord

OPTIONAL_INPUTS = frozenset({"image", "context"})
STAGE = "cosim"


class CosimTask:
    """Accuracy (x100, pooled over the split) of the argmax over the four choices: random 25."""

    default_split = "val"
    dataset = "cosim"
    limit_unit = "records"
    optional_inputs = OPTIONAL_INPUTS
    metric_info: dict[str, MetricInfo] = {
        "accuracy": percent(chance=25.0), "n": COUNT, "by_*.*.accuracy": percent(chance=25.0), "by_*.*.n": COUNT,
    }

    @staticmethod
    def mode(records: Sequence[CosimRecord]) -> ContextMode:
        """The context the records are shown with: the dataset's option (``full`` by default)."""
        return (records[0].context_mode if records else None) or "full"

    # -- the contract ------------------------------------------------------------------------
    def plan(self, examples: Sequence[CosimRecord], run: RunInfo) -> list[Stage]:
        mode = self.mode(examples)
        items = [Choice(r.id, r.visual(mode), r.choices, r.label) for r in examples]
        return [Stage(STAGE, Choose(items, per_unit=16))]

    def finish(self, examples: Sequence[CosimRecord], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = official_answers({str(a.id): a for a in records[STAGE]})  # the authors' float32 choice
        predictions: list[dict[str, Any]] = [
            {**answers[r.id], "type": r.type, "change_sentences": sentence_bucket(r.change),
             "yes_no": is_yes_no(r.question), "duplicate_gold_text": r.choices.count(r.choices[r.label]) > 1}
            for r in examples
        ]
        correct = {r.index: bool(answers[r.id]["correct"]) for r in examples}
        metrics = breakdowns(examples, correct)
        details = {"context": self.mode(examples),
                   "scores_file": "predictions.jsonl (id = record index, scores = 4 choices)",
                   **summary(predictions, "cosim")}
        accuracy = UnitScores.means("instance", {p["id"]: p["correct"] for p in predictions})
        groups = {"by_type": {p["id"]: p["type"] for p in predictions},
                  "by_change_sentences": {p["id"]: p["change_sentences"] for p in predictions},
                  "by_question": {p["id"]: "yes_no" if p["yes_no"] else "other" for p in predictions}}
        units = {"accuracy": accuracy, **accuracy.breakdown("accuracy", groups)}
        return Evaluation(metrics, predictions, details=details, units=units)

    def view(self, record: Mapping[str, Any], examples: Mapping[str, CosimRecord]) -> dict[str, Any] | None:
        """samples.html: the image, the question, the initial response, the change, the four
        responses with the model's scores and ranks (gold marked), the change type."""
        found = examples.get(str(record.get("id")))
        if found is None:
            return None
        seen = found
        scores = record.get("scores")
        scores = scores if isinstance(scores, list) and len(scores) == len(seen.choices) else None
        texts = [{"label": "question", "text": seen.question}, {"label": "initial response", "text": seen.answer_orig},
                 {"label": "change", "text": seen.change}, *scored_texts("response", seen.choices, scores, seen.label)]
        view: dict[str, Any] = {"images": [{"path": seen.image_path, "caption": f"{seen.folder}/{seen.img_fn}"}],
                                "texts": texts, "category": seen.type,
                                "fields": {"gold response": seen.label + 1, "change type": seen.type}}
        if scores is not None:
            view["margin"] = gold_margin(scores, seen.label)  # > 0: the gold response scored highest
        return view

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        """``predictions``: a list of four scores per record in file order, or
        ``{"<index>": [4 scores]}``; ``answer_key``: ``val.json`` or ``train.json``."""
        records = load_file(answer_key)
        return score_choices(records, load_predictions(predictions, len(records)), str(predictions))


def make_cosim(spec: Spec, settings: Settings) -> CosimTask:
    """``cosim``: its options (``context``, ``image_root``) are the dataset's."""
    return CosimTask()
