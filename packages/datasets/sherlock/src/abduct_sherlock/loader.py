"""Reading and validating the released annotation files (v1.1, and the deprecated v1.0)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from abduct import DataError
from abduct.kit import read_json
from abduct_sherlock.layout import ImageRoots, annotation_file
from abduct_sherlock.records import SherlockInstance
from abduct_sherlock.schema import FieldReader


@dataclass
class LoadReport:
    """Instances read from one file and the problems of the records that were skipped."""

    file: Path
    instances: list[SherlockInstance] = field(default_factory=list)
    skipped: list[DataError] = field(default_factory=list)


def parse_record(raw: Any, index: int, file: Path, roots: ImageRoots, *, need_split_idx: bool) -> SherlockInstance:
    """One validated record; raises DataError naming ``file``, ``index`` and the field."""
    r = FieldReader(file, index)
    if not isinstance(raw, dict):
        raise r.fail("(record)", f"expected an object, got {type(raw).__name__}")
    instance_id = r.text(raw, "instance_id", "instance_id")
    inputs = r.obj(raw, "inputs", "inputs")
    url, width, height = r.image(inputs, "image", "inputs.image")
    region = r.region(inputs, "bboxes", "inputs.bboxes", width, height)
    clue = r.text(inputs, "clue", "inputs.clue")
    confidence = r.integer(inputs, "confidence", "inputs.confidence", lo=1, hi=3)
    obs_idx = r.integer(inputs, "obs_idx", "inputs.obs_idx", lo=0)
    targets = r.obj(raw, "targets", "targets")
    inference = r.text(targets, "inference", "targets.inference")
    split_idx = None
    if need_split_idx or "split_idx" in raw:
        split_idx = r.integer(raw, "split_idx", "split_idx", lo=0)
    return SherlockInstance(
        instance_id=instance_id, image_url=url, image_path=str(roots.resolve(url)), width=width,
        height=height, region=region, clue=clue, inference=inference, confidence=confidence,
        obs_idx=obs_idx, split_idx=split_idx,
    )


def load_annotation_file(
    path: Path, roots: ImageRoots, *, need_split_idx: bool, skip_invalid: bool = False
) -> LoadReport:
    """Validate every record of ``path``. Without ``skip_invalid`` the first problem raises;
    with it, bad records (and later duplicates of an id) are skipped and reported."""
    path = Path(path)
    data = read_json(path, "Sherlock annotation file")
    if not isinstance(data, list):
        raise DataError(f"expected a JSON list of records, got {type(data).__name__}", file=path)
    if not data:
        raise DataError("the list of records is empty (nothing to evaluate or train on)", file=path)
    report = LoadReport(path)
    seen: dict[str, int] = {}
    for index, raw in enumerate(data):
        try:
            inst = parse_record(raw, index, path, roots, need_split_idx=need_split_idx)
            if inst.instance_id in seen:
                raise DataError(
                    f"duplicate instance_id {inst.instance_id!r} (first at record {seen[inst.instance_id]})",
                    file=path, record=index, field="instance_id",
                )
        except DataError as exc:
            if not skip_invalid:
                raise
            report.skipped.append(exc)
            continue
        seen[inst.instance_id] = index
        report.instances.append(inst)
    return report


def load_report(
    data_dir: Path, split: str, *, skip_invalid: bool = False,
    vg_root: Path | None = None, vcr_root: Path | None = None,
) -> LoadReport:
    """Instances of ``split`` ("train" or "val") plus the skipped records' problems."""
    path = annotation_file(Path(data_dir), split)
    roots = ImageRoots.for_data_dir(Path(data_dir), vg_root, vcr_root)
    return load_annotation_file(path, roots, need_split_idx=split == "val", skip_invalid=skip_invalid)


def load_instances(
    data_dir: Path, split: str, *, skip_invalid: bool = False,
    vg_root: Path | None = None, vcr_root: Path | None = None,
) -> list[SherlockInstance]:
    """Validated instances of ``split`` ("train" or "val") read from the released file in
    ``data_dir``; with ``skip_invalid`` bad records are skipped and counted on stderr."""
    report = load_report(data_dir, split, skip_invalid=skip_invalid, vg_root=vg_root, vcr_root=vcr_root)
    if report.skipped:
        print(
            f"warning: skipped {len(report.skipped)} invalid record(s) of {report.file.name}; "
            f"first: {report.skipped[0]}",
            file=sys.stderr,
        )
    return report.instances
