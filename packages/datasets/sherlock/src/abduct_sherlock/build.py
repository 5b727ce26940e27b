"""Building leaderboard-format files (instances, sorted ids, answer keys) from annotations.

The synthetic corpus uses these to write its validation/test leaderboard files; they follow
the released files' schema (REFERENCE 1.2).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import Box, Region
from abduct.kit import atomic_write_text
from abduct_sherlock.layout import leaderboard_files
from abduct_sherlock.records import SherlockInstance
from abduct_sherlock.schema import box_json


def test_id(*parts: object) -> str:
    """A stable 32-hex id for one leaderboard row."""
    return hashlib.md5("|".join(map(str, parts)).encode()).hexdigest()


def region_iou(box: Box, region: Region) -> float:
    """IoU of a proposal with a (possibly multi-box) region: the best over its boxes."""
    return max(box.iou(b) for b in region.boxes)


def row(inst: SherlockInstance, region: Region, inference: str, tid: str, task: str) -> dict[str, Any]:
    return {
        "image": {"url": inst.image_url, "width": inst.width, "height": inst.height},
        "region": [box_json(b) for b in region.boxes],
        "inference": inference,
        "test_id": tid,
        "extra_info": {"task": task},
    }


def group_by_image(instances: Iterable[SherlockInstance]) -> dict[str, list[SherlockInstance]]:
    """Instances per image URL, images in first-seen order."""
    out: dict[str, list[SherlockInstance]] = {}
    for inst in instances:
        out.setdefault(inst.image_url, []).append(inst)
    return out


def retrieval_files(split: str, chunk: int, instances: Sequence[SherlockInstance]) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """The full N x N cross product of one chunk: image side a, inference side b."""
    rows, key = [], {}
    for a in instances:
        for b in instances:
            tid = test_id(split, "retrieval", chunk, a.instance_id, b.instance_id)
            rows.append(row(a, a.region, b.inference, tid, "retrieval"))
            key[tid] = [a.instance_id, b.instance_id]
    return rows, key


def localization_files(
    split: str, instances: Sequence[SherlockInstance], proposals: Mapping[str, Sequence[Box]]
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Per image: GT rows (every box x every inference) and auto rows (every proposal x
    every inference, with the proposal's IoU with that inference's true region)."""
    rows, key = [], {}
    for url, group in group_by_image(instances).items():
        for i, box_owner in enumerate(group):
            for inf_owner in group:
                tid = test_id(split, "loc-gt", url, i, inf_owner.instance_id)
                rows.append(row(box_owner, box_owner.region, inf_owner.inference, tid, "localization"))
                key[tid] = {"type": "gt", "image": url, "inst_id": inf_owner.instance_id, "bbox_idx": i,
                            "correct": box_owner.instance_id == inf_owner.instance_id}
        for inf_owner in group:
            for p, box in enumerate(proposals.get(url, ())):
                tid = test_id(split, "loc-auto", url, p, inf_owner.instance_id)
                rows.append(row(inf_owner, Region((box,)), inf_owner.inference, tid, "localization"))
                key[tid] = {"type": "auto", "image": url, "inst_id": inf_owner.instance_id,
                            "IoU": region_iou(box, inf_owner.region)}
    return rows, key


def write_file_set(
    data_dir: Path, split: str, task: str, rows: list[dict[str, Any]], key: object | None, chunk: int | None = None
) -> dict[str, Path]:
    """Write instances, sorted instance ids and (when given) the answer key."""
    paths = leaderboard_files(data_dir, split, task, chunk)
    write_compact_json(paths["instances"], rows)
    write_compact_json(paths["instance_ids"], sorted(r["test_id"] for r in rows))
    if key is not None:
        write_compact_json(paths["answer_key"], key)
    return paths


def write_compact_json(path: Path, obj: object) -> None:
    """Leaderboard files are large (N^2 rows): no indentation."""
    atomic_write_text(path, json.dumps(obj, separators=(",", ":"), allow_nan=False))
