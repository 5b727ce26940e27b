"""The ``cosim`` task: four-way multiple choice through the core's ``multiple_choice``.

Each choice is scored as a text given ``record.visual(context)``: the image with the context
string of ``records.py`` (``question [SEP] answer_orig [SEP] change`` by default). The image
and the context are both optional inputs: an image-only scorer (``clip:tiny``) goes without
the context, a text-only scorer without the image, ``random`` reads neither; what a model
went without is listed in results.json (``inputs.ignored``). ``context=question_change`` and
``context=none`` give the paper's text-only ablations with any text scorer.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from abduct import COUNT, Evaluation, MetricInfo, RunContext, Settings, Spec, UnitScores, percent
from abduct.kit import Choice, first_argmax, gold_margin, multiple_choice, scored_texts
from abduct_cosim.breakdown import breakdowns, is_yes_no, sentence_bucket
from abduct_cosim.loader import load_file, load_split, split_file
from abduct_cosim.predictions import load_predictions
from abduct_cosim.records import ContextMode, CosimRecord

OPTIONAL_INPUTS = frozenset({"image", "context"})


class CosimTask:
    """Accuracy (x100, pooled over the split) of the argmax over the four choices: random 25."""

    default_split = "val"
    optional_inputs = OPTIONAL_INPUTS
    metric_info: dict[str, MetricInfo] = {
        "accuracy": percent(chance=25.0), "n": COUNT, "by_*.*.accuracy": percent(chance=25.0), "by_*.*.n": COUNT,
    }

    def __init__(self, context: ContextMode = "full", image_root: Path | None = None) -> None:
        self.context: ContextMode = context
        self.image_root = image_root
        self._seen: dict[str, CosimRecord] = {}  # what the last run evaluated, for sample_view

    def sample_view(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """samples.html: the image, the question, the initial response, the change, the four
        responses with the model's scores and ranks (gold marked), the change type."""
        seen = self._seen.get(str(record.get("id")))
        if seen is None:
            return None
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

    def evaluate(self, run: RunContext) -> Evaluation:
        records = list(run.apply_limit(load_split(run.data_dir, run.split, self.image_root), "records"))
        self._seen = {r.id: r for r in records}
        items = [Choice(r.id, r.visual(self.context), r.choices, r.label) for r in records]
        answers = multiple_choice(run, "cosim", items, per_unit=16)
        correct = {int(a["id"]): bool(a["correct"]) for a in answers}
        predictions: list[dict[str, Any]] = [
            {**a, "type": r.type, "change_sentences": sentence_bucket(r.change), "yes_no": is_yes_no(r.question),
             "duplicate_gold_text": r.choices.count(r.choices[r.label]) > 1}
            for r, a in zip(records, answers)
        ]
        metrics = breakdowns(records, correct)
        details = {"context": self.context, "scores_file": "predictions.jsonl (id = record index, scores = 4 choices)"}
        accuracy = UnitScores.means("instance", {a["id"]: a["correct"] for a in answers})
        groups = {"by_type": {p["id"]: p["type"] for p in predictions},
                  "by_change_sentences": {p["id"]: p["change_sentences"] for p in predictions},
                  "by_question": {p["id"]: "yes_no" if p["yes_no"] else "other" for p in predictions}}
        units = {"accuracy": accuracy, **accuracy.breakdown("accuracy", groups)}
        return Evaluation(metrics, predictions, [split_file(run.data_dir, run.split)], details, units=units)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        """``predictions``: a list of four scores per record in file order, or
        ``{"<index>": [4 scores]}``; ``answer_key``: ``val.json`` or ``train.json``."""
        records = load_file(answer_key)
        scores = load_predictions(predictions, len(records))
        correct = {r.index: first_argmax(scores[r.index]) == r.label for r in records}
        return breakdowns(records, correct)


def make_cosim(
    spec: Spec, settings: Settings, *, context: ContextMode = "full", image_root: Path | None = None
) -> CosimTask:
    """``cosim[,context=full|question_change|none][,image_root=PATH]``."""
    return CosimTask(context, image_root)
