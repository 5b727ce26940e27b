"""``abduct sherlock check``: every problem of a data directory, without running a model."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from abduct import AbductError, DataError
from abduct.kit import image_problem
from abduct_sherlock.keys import ComparisonKey, LocalizationKey, RetrievalKey
from abduct_sherlock.layout import ANNOTATION_FILES, AUTOBOX_FILE, ImageRoots, leaderboard_dir
from abduct_sherlock.loader import load_annotation_file
from abduct_sherlock.proposals import read_proposals


def check_data(data_dir: Path, vg_root: Path | None = None, vcr_root: Path | None = None, images: bool = True) -> list[str]:
    """Problems found: schema problems of every record, missing or unreadable images (or a
    size different from the recorded one), malformed leaderboard files."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise AbductError(f"data directory not found: {data_dir}")
    roots = ImageRoots.for_data_dir(data_dir, vg_root, vcr_root)
    problems: list[str] = []
    found_any = False
    checked: set[str] = set()
    val_ids: set[str] | None = None  # for the clue join of the comparison and localization keys
    for split, names in ANNOTATION_FILES.items():
        for name in names:
            path = data_dir / name
            if not path.is_file():
                continue
            found_any = True
            try:
                report = load_annotation_file(path, roots, need_split_idx=split == "val", skip_invalid=True)
            except DataError as exc:
                problems.append(str(exc))
                continue
            problems.extend(str(e) for e in report.skipped)
            if split == "val" and val_ids is None:
                val_ids = {inst.instance_id for inst in report.instances}
            for inst in report.instances:
                if images and inst.image_path not in checked:
                    checked.add(inst.image_path)
                    issue = image_problem(inst.image_path, (inst.width, inst.height))
                    if issue:
                        problems.append(f"{path.name}: {issue} (instance {inst.instance_id})")
    if not found_any:
        problems.append(f"no Sherlock annotation file in {data_dir} (expected {ANNOTATION_FILES['val'][0]} "
                        f"and/or {ANNOTATION_FILES['train'][0]})")
    if (data_dir / AUTOBOX_FILE).is_file():
        _try(problems, lambda: read_proposals(data_dir / AUTOBOX_FILE))
    readers: tuple[tuple[str, Callable[[Path], object]], ...] = (
        ("retrieval", RetrievalKey.read), ("localization", LocalizationKey.read), ("comparison", ComparisonKey.read))
    for task, reader in readers:
        folder = leaderboard_dir(data_dir, "val", task)
        for key_file in sorted(folder.glob("*_answer_key.json")) if folder.is_dir() else []:
            key = _try(problems, partial(reader, key_file))
            if val_ids is not None:
                problems.extend(_missing_clues(key_file, key, val_ids))
    return problems


def _missing_clues(key_file: Path, key: object, val_ids: set[str]) -> list[str]:
    """Instances whose clue the tasks give as context but the annotation file lacks."""
    if isinstance(key, ComparisonKey):
        wanted = [s.input_iid for s in key.sources]
    elif isinstance(key, LocalizationKey):
        wanted = [iid for g in key.gt for iid in g.box_owners.values()]
    else:
        return []
    missing = sorted(set(wanted) - val_ids)
    if not missing:
        return []
    return [f"{key_file}: {len(missing)} instance(s) not in the validation annotation file, so their clue cannot "
            f"be found (first: {missing[0]})"]


def _try(problems: list[str], fn: Callable[[], object]) -> object:
    try:
        return fn()
    except AbductError as exc:
        problems.append(str(exc))
        return None
