"""``whoops-identification``: is a picture weird or normal? Both pictures of each (weird,
normal) pair of the authors' identification release (``normals.py``) are classified;
``accuracy`` = 100 x the share of pictures classified right, over both (chance 50), with
``weird_accuracy`` and ``normal_accuracy`` for each side.

- A model that generates (``answer=auto``, the default; ``random`` too) is asked ``PROMPT``;
  an answer starting with ``weird``/``strange``/``unusual`` is weird, with
  ``normal``/``ordinary``/``natural`` normal, anything else is wrong and counted in
  ``unparsed`` with its reason (``unparsed_rate``, ``unparsed_reasons``: ``abduct.kit.answers``;
  "several options" when it names both sides). Generators that choose are offered ``weird`` and
  ``normal``.
- A scorer (``answer=score``, or any model that only scores) rates each picture with
  ``WEIRD_TEXT`` and ``NORMAL_TEXT``: weird when the first scores strictly higher, normal when
  the second does, wrong on a tie. ``pair_accuracy`` adds the pairwise view: the weird
  picture's margin (weird minus normal score) strictly above its counterpart's.

The task reads the ``whoops-identification`` dataset (``dataset.py``: where the release is,
which counterpart, the folds); without the release it stops with one line saying where it
looked and how to give it. ``--limit`` counts pairs. Tables by category and fold come from the
weird picture's image id (``unknown`` when its name is not a WHOOPS! id). One stage,
``identification``: a custom step over batches of 16 pairs, each picture answered as above.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from abduct import (
    AbductError,
    Custom,
    Evaluation,
    GenerationRequest,
    Records,
    RunInfo,
    RunModels,
    Settings,
    Spec,
    Stage,
    TextPool,
    VisualInput,
    percent,
)
from abduct.kit import batched
from abduct.kit.answers import UNPARSED_INFO, unparsed_metrics, unparsed_reason
from abduct.kit.reasoning import reasoning_fields
from abduct_whoops.common import declare, fold_groups, group_tables
from abduct_whoops.dataset import IdentificationExample
from abduct_whoops.normals import Pair

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
    if any("unparsed" in r for r in records):  # read from generated text: how many could not be
        out["unparsed"] = float(sum(r.get("unparsed") is not None for r in records))
    return out


STAGE = "identification"
Answer = Literal["auto", "score", "generate"]


class IdentificationTask:
    default_split = "all"
    dataset = "whoops-identification"
    limit_unit = "pairs"
    metric_info = declare({name: percent(chance=50.0) for name in
                           ("accuracy", "weird_accuracy", "normal_accuracy", "pair_accuracy")},
                          ("pairs",)) | UNPARSED_INFO

    def __init__(self, answer: Answer = "auto") -> None:
        self.answer: Answer = answer

    def _generates(self, run: RunInfo) -> bool:
        return self.answer == "generate" or (self.answer == "auto" and run.generates)

    def plan(self, examples: Sequence[IdentificationExample], run: RunInfo) -> list[Stage]:
        pairs = [example.pair for example in examples]
        units = [(batch[0].pair_id, batch) for batch in batched(pairs, 16)]
        ability = "generate" if self._generates(run) else "score"  # a model unable to: one line before it runs
        return [Stage(STAGE, Custom(units, STEPS[ability], frozenset({ability})))]

    def finish(self, examples: Sequence[IdentificationExample], records: Mapping[str, Records],
               run: RunInfo) -> Evaluation:
        classified = records[STAGE]
        category = {e.pair.image_id: e.category for e in examples}
        folds = fold_groups(run.split, ((e.pair.image_id, e.fold) for e in examples))
        metrics, details = group_tables(category, folds, classified, identification_values)
        metrics["pairs"] = len(examples)
        generate = self._generates(run)
        if generate:
            metrics.update(unparsed_metrics([r.get("unparsed") for r in classified]))
        details["answered_by"] = "generation" if generate else "scores"
        if examples:
            details.update(counterpart=examples[0].counterpart, identification_file=examples[0].file)
        details["chance"] = 50.0
        details.update({"prompt": PROMPT} if generate else {"texts": [WEIRD_TEXT, NORMAL_TEXT]})
        return Evaluation(metrics, classified, details=details)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        raise AbductError("whoops-identification has no official prediction-file format; run it with abduct eval")


def _pictures(batch: Sequence[Pair]) -> list[tuple[Pair, str, str]]:
    return [(p, label, path) for p in batch for label, path in (("weird", p.weird), ("normal", p.normal))]


def classify_scored(models: RunModels, batch: Sequence[Pair]) -> Records:
    """Each picture scored with ``WEIRD_TEXT`` and ``NORMAL_TEXT``: the strictly higher wins."""
    shown = _pictures(batch)
    visuals = [VisualInput(path) for _, _, path in shown for _ in (0, 1)]
    texts = [text for _ in shown for text in (WEIRD_TEXT, NORMAL_TEXT)]
    scores = models.require_scorer().score_pairs(visuals, texts).tolist()
    out = []
    for i, (pair, label, _) in enumerate(shown):
        weird, normal = scores[2 * i], scores[2 * i + 1]
        predicted = "weird" if weird > normal else "normal" if normal > weird else None
        out.append({"id": f"{pair.pair_id}/{label}", "pair": pair.pair_id, "image_id": pair.image_id,
                    "label": label, "scores": [weird, normal], "margin": weird - normal,
                    "prediction": predicted, "correct": predicted == label})
    return out


def classify_generated(models: RunModels, batch: Sequence[Pair]) -> Records:
    """Each picture's answer to ``PROMPT``, read by ``parse_label``; a chooser picks from weird, normal."""
    shown = _pictures(batch)
    answers = models.require_generator().generate([GenerationRequest(VisualInput(path), PROMPT)
                                                   for _, _, path in shown], TextPool.of(["weird", "normal"]))
    out = []
    for (pair, label, _), raw in zip(shown, answers):
        predicted = parse_label(raw)
        lowered = raw.lower()
        several = bool(re.search(r"\b(weird|strange|unusual)\b", lowered)
                       and re.search(r"\b(normal|ordinary|natural)\b", lowered))
        out.append({"id": f"{pair.pair_id}/{label}", "pair": pair.pair_id, "image_id": pair.image_id,
                    "label": label, "output": str(raw), "prediction": predicted, "correct": predicted == label,
                    "unparsed": unparsed_reason(raw, parsed=predicted is not None, several=several),
                    **reasoning_fields(raw)})
    return out


STEPS: dict[str, Callable[[RunModels, Sequence[Pair]], Records]] = {"score": classify_scored,
                                                                     "generate": classify_generated}


def make_identification(spec: Spec, settings: Settings, *, answer: Answer = "auto") -> IdentificationTask:
    """``whoops-identification[,answer=auto|score|generate]`` (the release, the counterpart and the
    folds: ``--dataset whoops-identification,normal_images=DIR,counterpart=natural,folds=FILE``)."""
    return IdentificationTask(answer)
