"""``abduct var check``: the annotation files' schema and the videos they name.

A video is looked for at ``<videos>/<video_id>.<ext>`` for ext in mp4, mkv, webm; each missing
one is listed once, with the number of events that need it. Decoding is not tried here (the
frame sampler names a corrupt or empty file when a model reads it).
"""

from __future__ import annotations

from pathlib import Path

from abduct import AbductError, DataError
from abduct.kit import require_dir
from abduct_var.inputs import video_path
from abduct_var.loader import SPLITS, annotation_file, load_file
from abduct_var.records import VIDEO_EXTENSIONS


def check_data(data_dir: Path, videos: Path | None = None) -> list[str]:
    data_dir = require_dir(Path(data_dir), "data directory")
    root = Path(videos) if videos is not None else data_dir / "videos"
    problems: list[str] = []
    needed: dict[str, int] = {}
    files = 0
    for split in SPLITS:
        try:
            file = annotation_file(data_dir, split)
        except AbductError:
            continue
        files += 1
        try:
            examples = load_file(file)
        except DataError as exc:
            problems.append(str(exc))
            continue
        for x in examples:
            for e in x.events:
                needed[e.video_id] = needed.get(e.video_id, 0) + 1
    if not files:
        problems.append(f"{data_dir}: no VAR annotation file (var_train|val|test_v1.0.json)")
    for video_id, count in needed.items():
        if not video_path(root, video_id).is_file():
            problems.append(f"video {video_id}: missing ({root}/{video_id}.{{{','.join(VIDEO_EXTENSIONS)}}}; "
                            f"{count} event(s))")
    return problems
