"""What every WHOOPS! task shares: which images a run evaluates, the text pools offered to
generators that choose (``random``, core's ``retrieve:<scorer>``), and the tables of results.

**Pools exclude the image's own texts.** With ``--split all`` the images of fold part ``P[k]``
(``splits.py``) are offered the texts of the images outside ``P[k]``; with
``--split fold<k>-<part>`` every image is offered the texts of fold ``k``'s training images.
A retrieval baseline thus returns the nearest text *of another image* (of the training images,
in the supervised protocol), never one written for the image itself.

**Tables.** ``details["by_category"]``: ``{commonsense_category: {metric: value, "n": images}}``;
``details["per_fold"]``: ``{"fold<k>": {metric: value, "n": images}}`` over each fold's test
part (``--split all`` only), and ``metrics["<metric>_fold_mean"]`` / ``["<metric>_fold_std"]``
the mean and the sample standard deviation (n - 1) over the five folds. Each value is the
task's metric recomputed on the group (a corpus-level metric stays corpus-level).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abduct import COUNT, MetricInfo, RunContext, TextPool, UnitScores
from abduct_whoops.loader import Release, load_release
from abduct_whoops.records import WhoopsImage
from abduct_whoops.splits import N_FOLDS, Folds, make_folds, parse_split, read_folds

Records = list[dict[str, Any]]
COUNTS = frozenset({"ties", "unparseable", "judge_parse_failures"})  # counts get no fold mean or std


@dataclass(frozen=True)
class Selection:
    """The images a run evaluates, in release order, and how they group into pools and folds."""

    release: Release
    images: tuple[WhoopsImage, ...]
    folds: Folds
    split: tuple[int, str] | None

    @property
    def data_files(self) -> list[Path]:
        return list(self.release.files)

    def pool_groups(self) -> list[tuple[str, list[WhoopsImage], list[WhoopsImage]]]:
        """``(name, images, pool images)``: the evaluated images and whose texts they are offered."""
        every = self.release.by_id()
        if self.split is not None:
            pool = [every[i] for i in self.folds.part(self.split[0], "train")]
            return [(f"fold{self.split[0]}", list(self.images), pool)]
        groups = []
        for k in range(N_FOLDS):
            inside = set(self.folds.part(k, "test"))
            chosen = [image for image in self.images if image.image_id in inside]
            if chosen:
                groups.append((f"p{k}", chosen, [image for image in self.release.images if image.image_id not in inside]))
        return groups

    def fold_groups(self) -> dict[str, set[str]]:
        """``{"fold<k>": test ids}`` with ``--split all``; nothing for a fold split."""
        if self.split is not None:
            return {}
        return {f"fold{k}": set(self.folds.part(k, "test")) for k in range(N_FOLDS)}


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


def select(run: RunContext, folds_file: Path | None = None) -> Selection:
    """Load the release in ``run.data_dir``, keep the run's split, then its ``--limit``."""
    release = load_release(run.data_dir)
    ids = [image.image_id for image in release.images]
    folds = read_folds(folds_file, ids) if folds_file is not None else make_folds(ids)
    split = parse_split(run.split)
    images: Sequence[WhoopsImage] = release.images
    if split is not None:
        wanted = set(folds.part(*split))
        images = [image for image in images if image.image_id in wanted]
    return Selection(release, tuple(run.apply_limit(list(images))), folds, split)


def pool_of(texts: Sequence[str]) -> TextPool:
    return TextPool.of([t for t in texts if t])


def tables(
    selection: Selection, records: Sequence[Mapping[str, Any]], compute: Callable[[Records], dict[str, float]],
    image_of: Callable[[Mapping[str, Any]], str] = lambda r: str(r["image_id"]),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(metrics, details)``: ``compute`` over all records, then per category and per fold
    (see the module docstring). ``image_of`` gives a record's image id."""
    category = {image.image_id: image.commonsense_category for image in selection.images}
    return group_tables(category, selection.fold_groups(), records, compute, image_of)


def tables_with_units(
    selection: Selection, records: Sequence[Mapping[str, Any]],
    scores: Callable[[Records], tuple[dict[str, float], dict[str, UnitScores]]],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, UnitScores]]:
    """``tables``, and the per-unit data ``scores`` gives for all the records (its intervals)."""
    units: dict[str, UnitScores] = {}

    def compute(chosen: Records) -> dict[str, float]:
        values, found = scores(chosen)
        if len(chosen) == len(records):  # the overall figures (a group holds fewer records)
            units.update(found)
        return values

    metrics, details = tables(selection, records, compute)
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
