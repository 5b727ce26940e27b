"""``abduct cosim check``: schema problems and missing or unreadable images."""

from __future__ import annotations

from pathlib import Path

from abduct import DataError
from abduct.kit import image_problem, require_dir
from abduct_cosim.loader import SPLITS, default_image_root, load_file, split_file


def check_data(data_dir: Path, image_root: Path | None = None, *, images: bool = True) -> list[str]:
    """One line per problem: a file that does not validate (its first problem), a missing or
    unreadable image (file, record, path). Empty when all is well."""
    data_dir = require_dir(Path(data_dir), "data directory")
    root = default_image_root(data_dir) if image_root is None else Path(image_root)
    files = [split_file(data_dir, s) for s in SPLITS if split_file(data_dir, s).is_file()]
    if not files:
        return [f"{data_dir}: neither train.json nor val.json found"]
    problems: list[str] = []
    for file in files:
        try:
            records = load_file(file, root)
        except DataError as exc:
            problems.append(str(exc))
            continue
        if not images:
            continue
        for r in records:
            problem = image_problem(r.image_path)
            if problem:
                problems.append(f"{file}: record {r.index}: {problem}")
    return problems
