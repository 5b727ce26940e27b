"""``whoops-vqa``: every question-answer pair of every image. The model is asked
``PROMPT`` with the question filled in (the question is in the prompt, so any generator can
answer); its answer is scored against the one gold answer with exact match (the core's
normalisation) and, given ``bem_model=DIR`` (a local BEM classifier), BEM: exact match first,
BEM only when it fails (the metrics package's ``bem``). Values x100. Paper: BLIP-2
FlanT5-XXL zero-shot EM 15 / BEM 55.

Generators that choose are offered the answers of other images (``common.py``). Records hold
``{id: "<image_id>#<k>", image_id, question, answer, prediction}``. Intervals resample images,
each with its questions (the share of matches pooled).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from abduct import Evaluation, GenerationRequest, RunContext, Settings, Spec, VisualInput, percent
from abduct.kit import GenerationItem, generate
from abduct_whoops.common import Records, declare, pool_of, tables_with_units
from abduct_whoops.scoring import score_vqa, vqa_scores
from abduct_whoops.views import WhoopsView

PROMPT = "Question: {question} Short answer:"


class VqaTask(WhoopsView):
    generated = "answer"
    default_split = "all"
    metric_info = declare({"exact_match": percent(), "bem": percent()}, ("questions",))

    def __init__(self, bem_model: Path | None = None, folds: Path | None = None) -> None:
        self.bem_model = bem_model
        self.folds = folds

    def evaluate(self, run: RunContext) -> Evaluation:
        selection = self._select(run, self.folds)
        run.metric("exact-match")
        if self.bem_model is not None:
            run.metric("bem", model=self.bem_model)  # a bad model directory fails before generating
        records: Records = []
        for name, images, pool_images in selection.pool_groups():
            items, meta = [], {}
            for image in images:
                for k, (question, answer) in enumerate(image.question_answering_pairs):
                    item_id = f"{image.image_id}#{k}"
                    meta[item_id] = {"image_id": image.image_id, "question": question, "answer": answer}
                    items.append(GenerationItem(item_id, GenerationRequest(VisualInput(image.path),
                                                                           PROMPT.format(question=question)), (answer,)))
            pool = pool_of([a for image in pool_images for _, a in image.question_answering_pairs])
            for r in generate(run, f"vqa-{name}", items, pool, per_unit=64):
                records.append({"id": r["id"], **meta[r["id"]], "prediction": r["prediction"]})
        order = {image.image_id: i for i, image in enumerate(selection.images)}
        records.sort(key=lambda r: (order[r["image_id"]], int(str(r["id"]).rsplit("#", 1)[1])))
        metrics, details, units = tables_with_units(selection, records,
                                                    lambda rs: vqa_scores(run.metric, rs, self.bem_model))
        metrics["questions"] = len(records)
        details.update(prompt=PROMPT, scale="x100",
                       bem=str(self.bem_model) if self.bem_model is not None else "not run (give bem_model=DIR)")
        return Evaluation(metrics, records, selection.data_files, details, units=units)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        return score_vqa(predictions, answer_key, self.bem_model)


def make_vqa(spec: Spec, settings: Settings, *, bem_model: Path | None = None, folds: Path | None = None) -> VqaTask:
    """``whoops-vqa[,bem_model=DIR][,folds=FILE]``."""
    return VqaTask(bem_model, folds)
