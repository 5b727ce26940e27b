"""``abduct whoops check``: the release's schema, then every picture (missing or unreadable),
named by image id; the identification release's pictures too when it is found."""

from __future__ import annotations

from pathlib import Path

from abduct import AbductError
from abduct.kit import image_problem, require_dir
from abduct_whoops.loader import load_release
from abduct_whoops.normals import find_file, load_pairs


def check_data(data_dir: Path, normal_images: Path | None = None) -> list[str]:
    data_dir = require_dir(Path(data_dir), "data directory")
    try:
        release = load_release(data_dir)
    except AbductError as exc:
        return [str(exc)]
    problems = []
    for image in release.images:
        problem = image_problem(image.path)
        if problem:
            problems.append(f"image {image.image_id}: {problem}")
    try:
        found = find_file(data_dir, normal_images)
        pairs = load_pairs(found) if found is not None else []
    except AbductError as exc:
        return [*problems, str(exc)]
    for pair in pairs:
        for side, path in (("weird", pair.weird), ("normal", pair.normal)):
            problem = image_problem(path)
            if problem:
                problems.append(f"identification pair {pair.pair_id} ({side}): {problem}")
    return problems
