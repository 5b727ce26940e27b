"""What every WHOOPS! task shares: the pool groups a run's images are generated in, the
text pools offered to generators that choose (the core's ``random`` and ``retrieve:<scorer>``), and
the tables of results.

**Pools exclude the image's own texts.** With ``--split all`` the images of fold part ``P[k]``
(``splits.py``) are offered the texts of the images outside ``P[k]`` (from the whole split,
``run.corpus``, whatever ``--limit`` keeps); with ``--split fold<k>-<part>`` every image is
offered the texts of fold ``k``'s training images (which the dataset gives each example, as
they are not in the split). A retrieval baseline thus returns the nearest text *of another
image* (of the training images, in the supervised protocol), never one written for the image
itself.

**Tables.** ``details["by_category"]``: ``{commonsense_category: {metric: value, "n": images}}``;
``details["per_fold"]``: ``{"fold<k>": {metric: value, "n": images}}`` over each fold's test
part (``--split all`` only), and ``metrics["<metric>_fold_mean"]`` / ``["<metric>_fold_std"]``
the mean and the sample standard deviation (n - 1) over the five folds. Each value is the
task's metric recomputed on the group (a corpus-level metric stays corpus-level).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from abduct import COUNT, MetricInfo, RunInfo, TextPool, UnitScores
from abduct_whoops.dataset import WhoopsExample
from abduct_whoops.records import WhoopsImage
from abduct_whoops.splits import N_FOLDS, parse_split

Records = list[dict[str, Any]]
COUNTS = frozenset({"ties", "unparsed", "judge_parse_failures"})  # counts get no fold mean or std


def pool_groups(examples: Sequence[WhoopsExample], run: RunInfo) -> list[tuple[str, list[WhoopsExample],
                                                                             list[WhoopsImage]]]:
    """``(name, examples, pool images)``: the evaluated images by pool group (``p<k>`` with
    ``--split all``, ``fold<k>`` with a fold split) and the images whose texts they are offered."""
    split = parse_split(run.split)
    if split is not None:
        return [(f"fold{split[0]}", list(examples), list(examples[0].training if examples else ()))]
    corpus: Sequence[WhoopsExample] = run.corpus
    groups = []
    for k in range(N_FOLDS):
        chosen = [example for example in examples if example.fold == k]
        if chosen:
            groups.append((f"p{k}", chosen, [example.image for example in corpus if example.fold != k]))
    return groups


def fold_groups(split: str, folds: Iterable[tuple[str, int | None]]) -> dict[str, set[str]]:
    """``{"fold<k>": image ids}`` of the images tested in fold k, from ``(image_id, fold)``, with
    ``--split all``; nothing for a fold split."""
    if parse_split(split) is not None:
        return {}
    chosen = list(folds)
    return {f"fold{k}": {image_id for image_id, fold in chosen if fold == k} for k in range(N_FOLDS)}


def in_order(examples: Sequence[WhoopsExample], records: Records, key: Callable[[Mapping[str, Any]], Any] | None = None
             ) -> Records:
    """``records`` in the examples' (release) order; ``key`` orders the records of one image."""
    order = {example.id: i for i, example in enumerate(examples)}
    return sorted(records, key=lambda r: (order[r["image_id"]], key(r) if key is not None else 0))


SPREAD = MetricInfo(None, (0.0, None), None)
"""A standard deviation over folds: neither better nor worse."""


def declare(values: Mapping[str, MetricInfo], counts: Sequence[str] = ()) -> dict[str, MetricInfo]:
    """A task's ``metric_info``: ``values`` with their fold means (the same info) and standard
    deviations, and ``counts`` (``n_images`` always) as counts."""
    out = dict(values)
    for key, info in values.items():
        out[f"{key}_fold_mean"] = info
        out[f"{key}_fold_std"] = SPREAD
    out.update({name: COUNT for name in ("n_images", *counts)})
    return out


def pool_of(texts: Sequence[str]) -> TextPool:
    return TextPool.of([t for t in texts if t])


def tables(
    examples: Sequence[WhoopsExample], run: RunInfo, records: Sequence[Mapping[str, Any]],
    compute: Callable[[Records], dict[str, float]],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(metrics, details)``: ``compute`` over all records, then per category and per fold
    (see the module docstring); each record names its image in ``image_id``."""
    category = {example.id: example.image.commonsense_category for example in examples}
    folds = fold_groups(run.split, ((example.id, example.fold) for example in examples))
    return group_tables(category, folds, records, compute)


def tables_with_units(
    examples: Sequence[WhoopsExample], run: RunInfo, records: Sequence[Mapping[str, Any]],
    scores: Callable[[Records], tuple[dict[str, float], dict[str, UnitScores]]],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, UnitScores]]:
    """``tables``, and the per-unit data ``scores`` gives for all the records (its intervals)."""
    units: dict[str, UnitScores] = {}

    def compute(chosen: Records) -> dict[str, float]:
        values, found = scores(chosen)
        if len(chosen) == len(records):  # the overall figures (a group holds fewer records)
            units.update(found)
        return values

    metrics, details = tables(examples, run, records, compute)
    return metrics, details, units


def group_tables(
    category: Mapping[str, str], fold_groups: Mapping[str, set[str]], records: Sequence[Mapping[str, Any]],
    compute: Callable[[Records], dict[str, float]],
    image_of: Callable[[Mapping[str, Any]], str] = lambda r: str(r["image_id"]),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``tables`` for any ``{image_id: category}`` and fold groups (official-format scoring
    uses it too)."""
    overall = compute([dict(r) for r in records])
    metrics: dict[str, Any] = dict(overall)
    metrics["n_images"] = len({image_of(r) for r in records})
    by_category: dict[str, Any] = {}
    for name in sorted({category[image_of(r)] for r in records}):
        chosen = [dict(r) for r in records if category[image_of(r)] == name]
        by_category[name] = {**compute(chosen), "n": len({image_of(r) for r in chosen})}
    details: dict[str, Any] = {"by_category": by_category}
    per_fold: dict[str, Any] = {}
    for name, ids in fold_groups.items():
        chosen = [dict(r) for r in records if image_of(r) in ids]
        if chosen:
            per_fold[name] = {**compute(chosen), "n": len({image_of(r) for r in chosen})}
    if per_fold:
        details["per_fold"] = per_fold
        for key in (k for k in overall if k not in COUNTS):
            values = [float(fold[key]) for fold in per_fold.values()]
            metrics[f"{key}_fold_mean"] = sum(values) / len(values)
            metrics[f"{key}_fold_std"] = _sample_std(values)
    return metrics, details


def _sample_std(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
