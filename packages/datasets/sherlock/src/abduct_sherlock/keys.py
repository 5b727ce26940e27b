"""Answer keys of the leaderboard tasks and scoring predictions against them exactly as the
official scorers do (same grouping, same order, same arithmetic)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from abduct import DataError
from abduct.kit import read_json
from abduct_sherlock import metrics, precision
from abduct_sherlock.schema import FieldReader


def _object(path: Path, what: str) -> dict[str, Any]:
    data = read_json(path, what)
    if not isinstance(data, dict):
        raise DataError(f"expected a JSON object, got {type(data).__name__}", file=path)
    return data


# -- retrieval ------------------------------------------------------------------------------
@dataclass
class RetrievalKey:
    """One chunk: the N x N cross product of its instances; cell (rows[k], cols[k]) holds
    the score of ``test_ids[k]``. Rows and columns follow first appearance on the image side
    (the order never changes a rank)."""

    instance_ids: list[str]
    test_ids: list[str]
    rows: np.ndarray
    cols: np.ndarray

    @property
    def cells(self) -> dict[str, tuple[int, int]]:
        return {t: (int(r), int(c)) for t, r, c in zip(self.test_ids, self.rows, self.cols)}

    @classmethod
    def read(cls, path: Path) -> RetrievalKey:
        path = Path(path)
        raw = _object(path, "retrieval answer key")
        bad = next((t for t, v in raw.items()
                    if type(v) is not list or len(v) != 2 or type(v[0]) is not str or type(v[1]) is not str), None)
        if bad is not None:
            raise DataError("expected [image_side_instance_id, inference_side_instance_id]", file=path, record=bad)
        if not raw:
            raise DataError("empty answer key", file=path)
        test_ids = list(raw)
        left = [v[0] for v in raw.values()]
        right = [v[1] for v in raw.values()]
        index = {iid: i for i, iid in enumerate(dict.fromkeys(left))}
        if not index.keys() >= set(right):
            k = next(k for k, b in enumerate(right) if b not in index)
            raise DataError(f"inference-side instance {right[k]} never appears on the image side", file=path, record=test_ids[k])
        n = len(index)
        rows = np.fromiter(map(index.__getitem__, left), dtype=np.int64, count=len(left))
        cols = np.fromiter(map(index.__getitem__, right), dtype=np.int64, count=len(right))
        _, first, counts = np.unique(rows * n + cols, return_index=True, return_counts=True)
        if (counts > 1).any():
            dup = int(first[np.argmax(counts > 1)])
            later = next(k for k in range(dup + 1, len(rows)) if rows[k] == rows[dup] and cols[k] == cols[dup])
            raise DataError(f"pair ({left[dup]}, {right[dup]}) also given by test id {test_ids[dup]}", file=path,
                            record=test_ids[later])
        if len(test_ids) != n * n:
            raise DataError(f"{len(test_ids)} test ids for {n} instances: not the full {n}x{n} cross product", file=path)
        return cls(list(index), test_ids, rows, cols)

    def matrix(self, scores: Mapping[str, float]) -> np.ndarray:
        n = len(self.instance_ids)
        sim = np.zeros((n, n), dtype=np.float64)
        sim[self.rows, self.cols] = np.fromiter(map(scores.__getitem__, self.test_ids), dtype=np.float64,
                                                count=len(self.test_ids))
        return sim

    def score(self, scores: Mapping[str, float]) -> dict[str, float]:
        return metrics.retrieval_scores(self.matrix(scores))


# -- localization ---------------------------------------------------------------------------
@dataclass
class GTImage:
    """One image's GT boxes x inferences: cell (bbox_idx, bbox_idx of the inference's own box).
    ``box_owners[bbox_idx]`` is the instance whose region that box is (whose clue goes with it)."""

    image: str
    size: int
    cells: dict[str, tuple[int, int]] = field(default_factory=dict)
    box_owners: dict[int, str] = field(default_factory=dict)

    def matrix(self, scores: Mapping[str, float]) -> np.ndarray:
        sim = np.zeros((self.size, self.size), dtype=np.float64)
        for tid, (r, c) in self.cells.items():
            sim[r, c] = scores[tid]
        return sim


@dataclass
class AutoImage:
    """One image's proposals for each inference, in answer-key order: (test id, IoU)."""

    image: str
    inferences: dict[str, list[tuple[str, float]]] = field(default_factory=dict)


@dataclass
class LocalizationKey:
    gt: list[GTImage]
    auto: list[AutoImage]

    @property
    def test_ids(self) -> list[str]:
        ids = [t for g in self.gt for t in g.cells]
        ids += [t for a in self.auto for rows in a.inferences.values() for t, _ in rows]
        return ids

    @classmethod
    def read(cls, path: Path) -> LocalizationKey:
        path = Path(path)
        raw = _object(path, "localization answer key")
        gt_rows: dict[str, list[tuple[str, str, int, bool]]] = {}
        auto: dict[str, AutoImage] = {}
        for tid, entry in raw.items():
            r = FieldReader(path, tid)
            kind = r.text(entry, "type", "type")
            image = r.text(entry, "image", "image")
            inst = r.text(entry, "inst_id", "inst_id")
            if kind == "gt":
                bbox_idx = r.integer(entry, "bbox_idx", "bbox_idx", lo=0)
                correct = r.get(entry, "correct", "correct")
                if not isinstance(correct, bool):
                    raise r.fail("correct", f"expected true or false, got {correct!r}")
                gt_rows.setdefault(image, []).append((tid, inst, bbox_idx, correct))
            elif kind == "auto":
                iou = r.number(entry, "IoU", "IoU")
                auto.setdefault(image, AutoImage(image)).inferences.setdefault(inst, []).append((tid, iou))
            else:
                raise r.fail("type", f"expected 'gt' or 'auto', got {kind!r}")
        if not raw:
            raise DataError("empty answer key", file=path)
        return cls([_gt_image(path, image, rows) for image, rows in gt_rows.items()], list(auto.values()))

    def score(self, scores: Mapping[str, float], where: str = "predictions") -> dict[str, Any]:
        """The official figures; where the official arithmetic loses information, the
        full-precision ones beside them and one warning naming ``where`` (``precision.py``)."""
        out: dict[str, Any] = {}
        extras: dict[str, Any] = {}
        if self.gt:
            images = [metrics.gt_result(g.matrix(scores)).record() for g in self.gt]
            out["gt_accuracy"] = metrics.macro_percent([r["gt_accuracy"] for r in images])
            extras = precision.summary(images, "gt_accuracy", precision.GT_LOSS, where)
        if self.auto:
            out["auto_accuracy"] = metrics.macro_percent([auto_image(a, scores)[0] for a in self.auto])
        return {**out, **extras}


def auto_image(image: AutoImage, scores: Mapping[str, float]) -> tuple[float, float]:
    """(model accuracy, oracle accuracy) of one image's auto-box rows."""
    return metrics.image_auto_accuracy(
        [([scores[t] for t, _ in rows], [iou for _, iou in rows]) for rows in image.inferences.values()]
    )


def _gt_image(path: Path, image: str, rows: list[tuple[str, str, int, bool]]) -> GTImage:
    n = math.isqrt(len(rows))
    if n * n != len(rows):
        raise DataError(f"{len(rows)} GT rows for image {image}: not a perfect square", file=path, record=rows[0][0])
    own: dict[str, int] = {}
    for tid, inst, bbox_idx, correct in rows:
        if correct:
            if inst in own:
                raise DataError(f"inference {inst} has two correct boxes", file=path, record=tid, field="correct")
            own[inst] = bbox_idx
    out = GTImage(image, n, box_owners={box: inst for inst, box in own.items()})
    seen: set[tuple[int, int]] = set()
    for tid, inst, bbox_idx, _ in rows:
        if inst not in own:
            raise DataError(f"inference {inst} has no correct box in image {image}", file=path, record=tid, field="inst_id")
        cell = (bbox_idx, own[inst])
        if max(cell) >= n or cell in seen:
            raise DataError(f"bbox_idx {bbox_idx} with inference {inst} is out of range or repeated for image {image}",
                            file=path, record=tid, field="bbox_idx")
        seen.add(cell)
        out.cells[tid] = cell
    return out


# -- comparison -----------------------------------------------------------------------------
@dataclass
class ComparisonSource:
    input_iid: str
    candidates: list[tuple[str, float, float]]  # (test id, annot1, annot2) in annotation order


@dataclass
class ComparisonKey:
    test_ids: list[str]
    sources: list[ComparisonSource]

    @classmethod
    def read(cls, path: Path) -> ComparisonKey:
        path = Path(path)
        raw = _object(path, "comparison answer key")
        r = FieldReader(path, "(top level)")
        id_map = r.obj(raw, "test_id_map", "test_id_map")
        annotations = r.get(raw, "annotations", "annotations")
        if not isinstance(annotations, list):
            raise r.fail("annotations", f"expected a list, got {type(annotations).__name__}")
        by_pair: dict[tuple[str, str], str] = {}
        for tid, entry in id_map.items():
            e = FieldReader(path, f"test_id_map[{tid}]")
            pair = (e.text(entry, "Input_iid", "Input_iid"), e.text(entry, "candidate", "candidate"))
            if pair in by_pair:
                raise e.fail("candidate", f"the pair {pair} is also test id {by_pair[pair]}")
            by_pair[pair] = tid
        sources = []
        for i, ann in enumerate(annotations):
            a = FieldReader(path, f"annotations[{i}]")
            iid = a.text(ann, "Input_iid", "Input_iid")
            cands = a.get(ann, "candidates", "candidates")
            if not isinstance(cands, list):
                raise a.fail("candidates", f"expected a list, got {type(cands).__name__}")
            if len(cands) > metrics.MAX_CANDIDATES:
                raise a.fail("candidates", f"{len(cands)} candidates; the official tie-break covers at most {metrics.MAX_CANDIDATES}")
            rows = []
            for j, cand in enumerate(cands):
                where = f"candidates[{j}]"
                src = a.text(cand, "source_iid", f"{where}.source_iid")
                labels = [a.integer(cand, k, f"{where}.{k}", lo=1, hi=3) for k in ("annot1", "annot2")]
                if (iid, src) not in by_pair:
                    raise a.fail(f"{where}.source_iid", f"no test id maps to ({iid}, {src}) in test_id_map")
                rows.append((by_pair[(iid, src)], float(labels[0]), float(labels[1])))
            sources.append(ComparisonSource(iid, rows))
        if not sources:
            raise DataError("no annotated sources", file=path, field="annotations")
        return cls(list(id_map), sources)

    def score(self, scores: Mapping[str, float], where: str = "predictions") -> dict[str, Any]:
        """The official figures, and the full-precision accuracy with one warning naming
        ``where`` where they differ."""
        per = [source_result(s, scores) for s in self.sources]
        out: dict[str, Any] = {name: metrics.macro_percent([p[name] for p in per])
                               for name in ("accuracy", "human", "oracle")}
        return {**out, **precision.summary(per, "accuracy", precision.COMPARISON_LOSS, where)}


def source_result(source: ComparisonSource, scores: Mapping[str, float]) -> dict[str, Any]:
    return metrics.source_scores(
        [scores[t] for t, _, _ in source.candidates],
        [a for _, a, _ in source.candidates],
        [b for _, _, b in source.candidates],
    )
