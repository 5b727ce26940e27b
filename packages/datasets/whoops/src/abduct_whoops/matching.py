"""``whoops-matching`` (the paper's "specificity"): for each image, its detailed caption
(``selected_caption``) and each of its under-specified captions are scored with the image; a
comparison counts when the detailed one scores strictly higher (a tie counts 0, the core's
two-way comparison). ``specificity`` = 100 x the share of such comparisons, over all
comparisons (5 per image in the release). Paper: CLIP ViT-L/14 70, BLIP-2 71.

Any scorer runs it (``clip:tiny``, ``clip:ViT-L-14@openai``, ``random``: about 50). Records
hold ``scores: [detailed, underspecified]``, the official prediction format per comparison.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from abduct import Evaluation, RunContext, Settings, Spec, UnitScores, VisualInput, percent
from abduct.kit import Candidate, TwoWay, compare_two
from abduct_whoops.common import declare, tables
from abduct_whoops.scoring import score_matching, specificity_values
from abduct_whoops.views import WhoopsView


class MatchingTask(WhoopsView):
    default_split = "all"
    metric_info = declare({"specificity": percent(chance=50.0)}, ("ties", "comparisons"))

    def __init__(self, folds: Path | None = None) -> None:
        self.folds = folds

    def evaluate(self, run: RunContext) -> Evaluation:
        selection = self._select(run, self.folds)
        items, owner = [], {}
        for image in selection.images:
            if not image.selected_caption:
                continue
            visual = VisualInput(image.path)
            for k, under in enumerate(image.crowd_underspecified_captions):
                item_id = f"{image.image_id}#{k}"
                owner[item_id] = image.image_id
                items.append(TwoWay(item_id, Candidate(visual, image.selected_caption), Candidate(visual, under), 0))
        records = [{"image_id": owner[r["id"]], **r} for r in compare_two(run, "matching", items, per_unit=50)]
        metrics, details = tables(selection, records, specificity_values)
        metrics["comparisons"] = len(records)
        details["detailed_caption"] = "selected_caption"
        wins: dict[str, tuple[float, float]] = {}
        for r in records:  # the image is the unit: its comparisons are resampled together
            won, seen = wins.get(r["image_id"], (0.0, 0.0))
            wins[r["image_id"]] = (won + float(r["scores"][0] > r["scores"][1]), seen + 1.0)
        units = {"specificity": UnitScores.ratio("image", wins)} if records else {}
        return Evaluation(metrics, records, selection.data_files, details, units=units)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        return score_matching(predictions, answer_key)


def make_matching(spec: Spec, settings: Settings, *, folds: Path | None = None) -> MatchingTask:
    """``whoops-matching[,folds=FILE]``."""
    return MatchingTask(folds)
