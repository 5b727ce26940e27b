"""``abduct nleye check``: the CSV's schema and missing or unreadable images."""

from __future__ import annotations

from pathlib import Path

from abduct import DataError
from abduct.kit import image_problem, require_dir
from abduct_nleye.loader import CSV_NAME, load_csv


def check_data(data_dir: Path) -> list[str]:
    data_dir = require_dir(Path(data_dir), "data directory")
    try:
        samples = load_csv(data_dir / CSV_NAME, data_dir)
    except DataError as exc:
        return [str(exc)]
    problems = []
    for s in samples:
        for path in (s.premise_image, *s.hypothesis_images):
            problem = image_problem(path)
            if problem:
                problems.append(f"sample {s.sample_id}: {problem}")
    return problems
