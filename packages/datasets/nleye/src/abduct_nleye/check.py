"""``abduct nleye check``: the CSV's schema and missing or unreadable images."""

from __future__ import annotations

from pathlib import Path

from abduct import DataError
from abduct.kit import image_problem, require_dir
from abduct_nleye.loader import CSV_NAME, load_csv


def check_data(data_dir: Path, image_root: Path | None = None) -> list[str]:
    """One line per problem: the CSV's first one, or each missing or unreadable image (its
    sample); images under ``image_root`` (default ``DIR/images``)."""
    data_dir = require_dir(Path(data_dir), "data directory")
    try:
        samples = load_csv(data_dir / CSV_NAME, data_dir, image_root)
    except DataError as exc:
        return [str(exc)]
    problems = []
    for s in samples:
        for path in (s.premise_image, *s.hypothesis_images):
            problem = image_problem(path)
            if problem:
                problems.append(f"sample {s.sample_id}: {problem}")
    return problems
