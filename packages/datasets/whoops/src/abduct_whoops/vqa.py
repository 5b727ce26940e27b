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

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import (
    TEXT_METRICS,
    Evaluation,
    Generate,
    GenerationItem,
    GenerationRequest,
    Records,
    RunInfo,
    ScoreContext,
    Settings,
    Spec,
    Stage,
    VisualInput,
)
from abduct_whoops.common import declare, in_order, pool_groups, pool_of, tables_with_units
from abduct_whoops.dataset import WhoopsExample
from abduct_whoops.scoring import score_vqa, vqa_scores
from abduct_whoops.views import WhoopsView

PROMPT = "Question: {question} Short answer:"
STAGE = "vqa"


def questions(examples: Sequence[WhoopsExample]) -> dict[str, dict[str, str]]:
    """``{"<image_id>#<k>": {image_id, question, answer}}`` of every question of ``examples``."""
    return {f"{e.id}#{k}": {"image_id": e.id, "question": question, "answer": answer}
            for e in examples for k, (question, answer) in enumerate(e.image.question_answering_pairs)}


class VqaTask(WhoopsView):
    generated = "answer"
    default_split = "all"
    dataset = "whoops"
    limit_unit = "images"
    metric_info = declare({"exact_match": TEXT_METRICS["exact_match"], "bem": TEXT_METRICS["bem"]}, ("questions",))

    def __init__(self, bem_model: Path | None = None) -> None:
        self.bem_model = bem_model

    def plan(self, examples: Sequence[WhoopsExample], run: RunInfo) -> list[Stage]:
        """One generation stage per pool group (``vqa-<group>``), a request per question."""
        run.metric("exact-match")
        if self.bem_model is not None:
            run.metric("bem", model=self.bem_model)  # a bad model directory fails before generating
        stages = []
        for name, chosen, pool_images in pool_groups(examples, run):
            items = [GenerationItem(item_id, GenerationRequest(VisualInput(e.image.path),
                                                               PROMPT.format(question=meta["question"])),
                                    (meta["answer"],))
                     for e in chosen for item_id, meta in questions([e]).items()]
            pool = pool_of([a for image in pool_images for _, a in image.question_answering_pairs])
            stages.append(Stage(f"{STAGE}-{name}", Generate(items, pool, per_unit=64)))
        return stages

    def finish(self, examples: Sequence[WhoopsExample], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        meta = questions(examples)
        answered: Records = [{"id": r.id, **meta[r.id], "prediction": r.prediction}
                             for stage, done in records.items() if stage.startswith(f"{STAGE}-") for r in done]
        answered = in_order(examples, answered, lambda r: int(str(r["id"]).rsplit("#", 1)[1]))
        metrics, details, units = tables_with_units(examples, run, answered,
                                                    lambda rs: vqa_scores(run.metric, rs, self.bem_model))
        metrics["questions"] = len(answered)
        details.update(prompt=PROMPT, scale="x100",
                       bem=str(self.bem_model) if self.bem_model is not None else "not run (give bem_model=DIR)")
        return Evaluation(metrics, answered, details=details, units=units)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None,
                    *, context: ScoreContext | None = None) -> dict[str, Any]:
        return score_vqa(predictions, answer_key, self.bem_model, context.metric if context is not None else None)


def make_vqa(spec: Spec, settings: Settings, *, bem_model: Path | None = None) -> VqaTask:
    """``whoops-vqa[,bem_model=DIR]`` (the folds: ``--dataset whoops,folds=FILE``)."""
    return VqaTask(bem_model)
