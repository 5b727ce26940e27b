"""``whoops-identification``: is a picture weird or normal? Both pictures of each (weird,
normal) pair of the authors' identification release (``normals.py``) are classified;
``accuracy`` = 100 x the share of pictures classified right, over both (chance 50), with
``weird_accuracy`` and ``normal_accuracy`` for each side.

- A model that generates (``answer=auto``, the default; ``random`` too) is asked ``PROMPT``;
  an answer starting with ``weird``/``strange``/``unusual`` is weird, with
  ``normal``/``ordinary``/``natural`` normal, anything else is wrong and counted
  (``unparseable``). Generators that choose are offered ``weird`` and ``normal``.
- A scorer (``answer=score``, or any model that only scores) rates each picture with
  ``WEIRD_TEXT`` and ``NORMAL_TEXT``: weird when the first scores strictly higher, normal when
  the second does, wrong on a tie. ``pair_accuracy`` adds the pairwise view: the weird
  picture's margin (weird minus normal score) strictly above its counterpart's.

Without the release the task stops with one line saying where it looked and how to give it.
Tables by category and fold come from the weird picture's image id (``unknown`` when its name
is not a WHOOPS! id).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from abduct import (
    AbductError,
    Evaluation,
    GenerationRequest,
    RunContext,
    Settings,
    Spec,
    TextPool,
    VisualInput,
    percent,
)
from abduct.kit import batched
from abduct_whoops.common import Records, declare, group_tables, select
from abduct_whoops.normals import IDENTIFICATION_FILES, Counterpart, Pair, find_file, load_pairs

PROMPT = "Is this image weird or normal? Answer with one word: weird or normal."
WEIRD_TEXT = "a weird, unusual image that defies common sense"
NORMAL_TEXT = "a normal, ordinary image"
_WEIRD = re.compile(r"^\W*(weird|strange|unusual)\b")
_NORMAL = re.compile(r"^\W*(normal|ordinary|natural)\b")


def parse_label(text: str) -> str | None:
    """``weird`` or ``normal`` from a generator's answer (see the module docstring); else None."""
    lowered = text.strip().lower()
    if _WEIRD.match(lowered):
        return "weird"
    if _NORMAL.match(lowered):
        return "normal"
    return None


def identification_values(records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    def share(rows: list[Mapping[str, Any]]) -> float:
        return 100.0 * sum(bool(r["correct"]) for r in rows) / len(rows) if rows else 0.0

    out = {"accuracy": share(list(records)),
           "weird_accuracy": share([r for r in records if r["label"] == "weird"]),
           "normal_accuracy": share([r for r in records if r["label"] == "normal"])}
    margins: dict[str, dict[str, float]] = {}
    for r in records:
        if "margin" in r:
            margins.setdefault(str(r["pair"]), {})[str(r["label"])] = float(r["margin"])
    complete = [m for m in margins.values() if len(m) == 2]
    if complete:
        out["pair_accuracy"] = 100.0 * sum(m["weird"] > m["normal"] for m in complete) / len(complete)
    if any("unparseable" in r for r in records):
        out["unparseable"] = float(sum(int(r.get("unparseable", 0)) for r in records))
    return out


class IdentificationTask:
    default_split = "all"
    metric_info = declare({name: percent(chance=50.0) for name in
                           ("accuracy", "weird_accuracy", "normal_accuracy", "pair_accuracy")},
                          ("unparseable", "pairs"))

    def __init__(self, normal_images: Path | None = None, counterpart: Counterpart = "normal",
                 answer: Literal["auto", "score", "generate"] = "auto", folds: Path | None = None) -> None:
        self.normal_images = normal_images
        self.counterpart: Counterpart = counterpart
        self.answer = answer
        self.folds = folds

    def _pairs(self, run: RunContext) -> tuple[Path, list[Pair]]:
        found = find_file(run.data_dir, self.normal_images)
        if found is None:
            raise AbductError(
                "whoops-identification needs the normal counterparts of the images, from the authors' separate "
                f"identification release ({IDENTIFICATION_FILES[0]} and its pictures), which is not in "
                f"{run.data_dir} or {run.data_dir / 'identification'}: give it with "
                "whoops-identification,normal_images=DIR")
        return found, load_pairs(found, self.counterpart)

    def evaluate(self, run: RunContext) -> Evaluation:
        selection = select(run, self.folds)
        file, every = self._pairs(run)
        category = {image.image_id: image.commonsense_category for image in selection.release.images}
        if selection.split is not None:
            wanted = {image.image_id for image in selection.images}
            every = [p for p in every if p.image_id in wanted]
        pairs = list(run.apply_limit(every))
        generate = self.answer == "generate" or (self.answer == "auto" and run.generates)
        fn = self._generated(run) if generate else self._scored(run)
        records = run.map_units("identification", [(b[0].pair_id, b) for b in batched(pairs, 16)], fn)
        category = {p.image_id: category.get(p.image_id, "unknown") for p in pairs}
        metrics, details = group_tables(category, selection.fold_groups(), records, identification_values,
                                        lambda r: str(r["image_id"]))
        metrics["pairs"] = len(pairs)
        details.update(answered_by="generation" if generate else "scores", counterpart=f"{self.counterpart}_image",
                       identification_file=str(file), chance=50.0)
        details.update({"prompt": PROMPT} if generate else {"texts": [WEIRD_TEXT, NORMAL_TEXT]})
        return Evaluation(metrics, records, [*selection.data_files, file], details)

    @staticmethod
    def _images(batch: Sequence[Pair]) -> list[tuple[Pair, str, str]]:
        return [(p, label, path) for p in batch for label, path in (("weird", p.weird), ("normal", p.normal))]

    def _scored(self, run: RunContext) -> Any:
        engine = run.require_scorer()

        def classify(batch: Sequence[Pair]) -> Records:
            shown = self._images(batch)
            visuals = [VisualInput(path) for _, _, path in shown for _ in (0, 1)]
            texts = [text for _ in shown for text in (WEIRD_TEXT, NORMAL_TEXT)]
            scores = engine.score_pairs(visuals, texts).tolist()
            out = []
            for i, (pair, label, _) in enumerate(shown):
                weird, normal = scores[2 * i], scores[2 * i + 1]
                predicted = "weird" if weird > normal else "normal" if normal > weird else None
                out.append({"id": f"{pair.pair_id}/{label}", "pair": pair.pair_id, "image_id": pair.image_id,
                            "label": label, "scores": [weird, normal], "margin": weird - normal,
                            "prediction": predicted, "correct": predicted == label})
            return out
        return classify

    def _generated(self, run: RunContext) -> Any:
        engine = run.require_generator()
        pool = TextPool.of(["weird", "normal"])

        def classify(batch: Sequence[Pair]) -> Records:
            shown = self._images(batch)
            answers = engine.generate([GenerationRequest(VisualInput(path), PROMPT) for _, _, path in shown], pool)
            out = []
            for (pair, label, _), raw in zip(shown, answers):
                predicted = parse_label(raw)
                out.append({"id": f"{pair.pair_id}/{label}", "pair": pair.pair_id, "image_id": pair.image_id,
                            "label": label, "output": raw, "prediction": predicted, "correct": predicted == label,
                            "unparseable": int(predicted is None)})
            return out
        return classify

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        raise AbductError("whoops-identification has no official prediction-file format; run it with abduct eval")


def make_identification(spec: Spec, settings: Settings, *, normal_images: Path | None = None,
                        counterpart: Counterpart = "normal", answer: Literal["auto", "score", "generate"] = "auto",
                        folds: Path | None = None) -> IdentificationTask:
    """``whoops-identification[,normal_images=DIR][,counterpart=normal|natural][,answer=auto|score|generate]
    [,folds=FILE]``."""
    return IdentificationTask(normal_images, counterpart, answer, folds)
