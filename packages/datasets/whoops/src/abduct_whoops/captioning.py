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

from pathlib import Path
from typing import Any

from abduct import Evaluation, GenerationRequest, RunContext, Settings, Spec, VisualInput, higher
from abduct.kit import GenerationItem, generate
from abduct_whoops.common import Records, declare, pool_of, tables_with_units
from abduct_whoops.scoring import caption_scores, score_captions
from abduct_whoops.views import WhoopsView

PROMPT = "A short caption describing this image:"


class CaptioningTask(WhoopsView):
    generated = "caption"
    default_split = "all"
    metric_info = declare({"bleu_4": higher(0.0, 100.0), "cider": higher(0.0, 1000.0)})

    def __init__(self, folds: Path | None = None) -> None:
        self.folds = folds

    def evaluate(self, run: RunContext) -> Evaluation:
        selection = self._select(run, self.folds)
        usable = [image for image in selection.images if image.crowd_captions]
        keep = {image.image_id for image in usable}
        run.metric("bleu"), run.metric("cider")  # fail before generating when abduct-metrics is missing
        records: Records = []
        for name, images, pool_images in selection.pool_groups():
            items = [GenerationItem(image.image_id, GenerationRequest(VisualInput(image.path), PROMPT),
                                    image.crowd_captions) for image in images if image.image_id in keep]
            pool = pool_of([c for image in pool_images for c in image.crowd_captions])
            for record in generate(run, f"captioning-{name}", items, pool, per_unit=32):
                records.append({"image_id": record["id"], **{k: v for k, v in record.items() if k != "id"}})
        order = {image.image_id: i for i, image in enumerate(selection.images)}
        records.sort(key=lambda r: order[r["image_id"]])
        metrics, details, units = tables_with_units(selection, records, lambda rs: caption_scores(run.metric, rs))
        details.update(prompt=PROMPT, skipped=len(selection.images) - len(usable),
                       references="crowd_captions", scale="x100")
        return Evaluation(metrics, records, selection.data_files, details, units=units)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        return score_captions(predictions, answer_key)


def make_captioning(spec: Spec, settings: Settings, *, folds: Path | None = None) -> CaptioningTask:
    """``whoops-captioning[,folds=FILE]`` (``folds``: a file written by ``abduct whoops folds``)."""
    return CaptioningTask(folds)
