"""``whoops-matching`` (the paper's "specificity"): for each image, its detailed caption
(``selected_caption``) and each of its under-specified captions are scored with the image; a
comparison counts when the detailed one scores strictly higher (a tie counts 0, the core's
two-way comparison). ``specificity`` = 100 x the share of such comparisons, over all
comparisons (5 per image in the release). Paper: CLIP ViT-L/14 70, BLIP-2 71.

Any scorer runs it (``clip:tiny``, ``clip:ViT-L-14@openai``, ``random``: about 50). Records
hold ``scores: [detailed, underspecified]``, the official prediction format per comparison.
One stage, ``matching``: the comparisons, 50 to a stored unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from abduct import (
    Candidate,
    Compare,
    Evaluation,
    Records,
    RunInfo,
    Settings,
    Spec,
    Stage,
    TwoWay,
    UnitScores,
    VisualInput,
    percent,
)
from abduct_whoops.common import declare, tables
from abduct_whoops.dataset import WhoopsExample
from abduct_whoops.scoring import score_matching, specificity_values
from abduct_whoops.views import WhoopsView

STAGE = "matching"


def comparisons(examples: Sequence[WhoopsExample]) -> list[tuple[str, TwoWay]]:
    """``(image id, comparison)`` of every under-specified caption of the images with a detailed
    one; a comparison's id is ``<image_id>#<k>``."""
    out = []
    for example in examples:
        image = example.image
        if not image.selected_caption:
            continue
        visual = VisualInput(image.path)
        for k, under in enumerate(image.crowd_underspecified_captions):
            out.append((image.image_id, TwoWay(f"{image.image_id}#{k}", Candidate(visual, image.selected_caption),
                                               Candidate(visual, under), 0)))
    return out


class MatchingTask(WhoopsView):
    default_split = "all"
    dataset = "whoops"
    limit_unit = "images"
    metric_info = declare({"specificity": percent(chance=50.0)}, ("ties", "comparisons"))

    def plan(self, examples: Sequence[WhoopsExample], run: RunInfo) -> list[Stage]:
        return [Stage(STAGE, Compare([item for _, item in comparisons(examples)], per_unit=50))]

    def finish(self, examples: Sequence[WhoopsExample], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        owner = {item.id: image_id for image_id, item in comparisons(examples)}
        compared = [{"image_id": owner[r.id], **asdict(r)} for r in records[STAGE]]
        metrics, details = tables(examples, run, compared, specificity_values)
        metrics["comparisons"] = len(compared)
        details["detailed_caption"] = "selected_caption"
        wins: dict[str, tuple[float, float]] = {}
        for r in compared:  # the image is the unit: its comparisons are resampled together
            won, seen = wins.get(r["image_id"], (0.0, 0.0))
            wins[r["image_id"]] = (won + float(r["scores"][0] > r["scores"][1]), seen + 1.0)
        units = {"specificity": UnitScores.ratio("image", wins)} if compared else {}
        return Evaluation(metrics, compared, details=details, units=units)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        return score_matching(predictions, answer_key)


def make_matching(spec: Spec, settings: Settings) -> MatchingTask:
    """``whoops-matching`` (the folds: ``--dataset whoops,folds=FILE``)."""
    return MatchingTask()
