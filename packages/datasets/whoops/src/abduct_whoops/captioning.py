"""``whoops-captioning``: a generated caption per image, scored with BLEU-4 and CIDEr(-D)
against the image's crowd captions, COCO conventions (PTB tokenisation; the metrics
package's ``bleu`` and ``cider``, whose values these are).

Values are x100 (the paper's scale: BLIP-2 FlanT5-XXL zero-shot 31 / 120). The model is asked ``PROMPT``;
generators that choose are offered the crowd captions of other images (``common.py``), so
``random`` is a random caption of another image and ``retrieve:clip:...`` the caption-retrieval
baseline (nearest crowd caption of another image). Images without crowd captions are left out
and counted (``details.skipped``). Breakdowns: by category and fold, each BLEU-4 and CIDEr
recomputed on the group. Intervals resample images (BLEU-4 from their n-gram statistics,
CIDEr-D from their scores with the full set's document frequencies).
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
from abduct_whoops.scoring import caption_scores, score_captions
from abduct_whoops.views import WhoopsView

PROMPT = "A short caption describing this image:"
STAGE = "captioning"


class CaptioningTask(WhoopsView):
    generated = "caption"
    default_split = "all"
    dataset = "whoops"
    limit_unit = "images"
    metric_info = declare({"bleu_4": TEXT_METRICS["bleu_4"], "cider": TEXT_METRICS["cider"]})

    def plan(self, examples: Sequence[WhoopsExample], run: RunInfo) -> list[Stage]:
        """One generation stage per pool group (``captioning-<group>``), of the images with
        crowd captions."""
        run.metric("bleu"), run.metric("cider")  # fail before generating when abduct-metrics is missing
        stages = []
        for name, chosen, pool_images in pool_groups(examples, run):
            items = [GenerationItem(e.id, GenerationRequest(VisualInput(e.image.path), PROMPT), e.image.crowd_captions)
                     for e in chosen if e.image.crowd_captions]
            pool = pool_of([c for image in pool_images for c in image.crowd_captions])
            stages.append(Stage(f"{STAGE}-{name}", Generate(items, pool, per_unit=32)))
        return stages

    def finish(self, examples: Sequence[WhoopsExample], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        captions: Records = [{"image_id": r.id, "prediction": r.prediction, "references": r.references}
                             for stage, done in records.items() if stage.startswith(f"{STAGE}-") for r in done]
        captions = in_order(examples, captions)
        metrics, details, units = tables_with_units(examples, run, captions, lambda rs: caption_scores(run.metric, rs))
        details.update(prompt=PROMPT, skipped=sum(1 for e in examples if not e.image.crowd_captions),
                       references="crowd_captions", scale="x100")
        return Evaluation(metrics, captions, details=details, units=units)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None,
                    *, context: ScoreContext | None = None) -> dict[str, Any]:
        return score_captions(predictions, answer_key, context.metric if context is not None else None)


def make_captioning(spec: Spec, settings: Settings) -> CaptioningTask:
    """``whoops-captioning`` (the folds: ``--dataset whoops,folds=FILE``)."""
    return CaptioningTask()
