"""``abduct whoops submit``: the leaderboard file from a finished run.

The authors publish no scorer: the leaderboard takes the dataset CSV with a ``predictions``
column added. This writes ``whoops_dataset.csv``'s rows unchanged (its header, cells and
order; UTF-8 with a BOM, as released) plus that column, filled from the run's
``predictions.jsonl``: the caption (captioning), the explanation (explanation), a JSON list of
answers in question order (vqa), a JSON list of ``[detailed, underspecified]`` score pairs
(matching). For the other released forms the rows are written in the CSV's schema. Every
image needs a prediction: a partial run (``--limit``, a fold split) is refused, naming the
first image without one.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.kit import atomic_write_text, read_json, require_file
from abduct_whoops.loader import CSV_NAME, load_release, read_csv_rows
from abduct_whoops.records import COLUMNS, WhoopsImage

TASKS = ("whoops-captioning", "whoops-explanation", "whoops-vqa", "whoops-matching")


def _records(run_dir: Path) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    results = read_json(run_dir / "results.json", "run results")
    task = str(results.get("task", "")).split(",")[0]
    if task not in TASKS:
        raise AbductError(f"{run_dir} is a run of '{task}'; the leaderboard file is made from a run of "
                          f"{', '.join(TASKS)}")
    path = require_file(run_dir / "predictions.jsonl", "run predictions")
    records = []
    with open(path, encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            try:
                records.append(json.loads(text))
            except json.JSONDecodeError as exc:
                raise DataError(f"not valid JSON ({exc.msg})", file=path, record=f"line {line}") from None
    return task, records, results


def predictions_by_image(task: str, records: list[dict[str, Any]], path: Path | None = None) -> dict[str, str]:
    """The ``predictions`` cell of each image id, from a run's records (``path``: their file,
    named with the line of a record that is not what a run of ``task`` writes)."""
    cells: dict[str, str] = {}
    grouped: dict[str, list[tuple[int, Any]]] = {}
    for line, r in enumerate(records, start=1):
        try:
            if task in ("whoops-captioning", "whoops-explanation"):
                cells[str(r["image_id"])] = str(r["prediction"])
                continue
            k = int(str(r["id"]).rsplit("#", 1)[1])
            grouped.setdefault(str(r["image_id"]), []).append((k, r["prediction"] if task == "whoops-vqa" else r["scores"]))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise DataError(f"is not a {task} prediction ({type(exc).__name__}: {exc})",
                            file=path or "predictions", record=f"line {line}") from None
    return cells or {image_id: json.dumps([v for _, v in sorted(values)]) for image_id, values in grouped.items()}


def _cells(image: WhoopsImage) -> dict[str, str]:
    lists = {"crowd_captions": image.crowd_captions, "crowd_explanations": image.crowd_explanations,
             "crowd_underspecified_captions": image.crowd_underspecified_captions,
             "question_answering_pairs": [list(p) for p in image.question_answering_pairs]}
    plain = {"image": f"{image.image_id}.png", "designer_explanation": image.designer_explanation,
             "selected_caption": image.selected_caption, "commonsense_category": image.commonsense_category,
             "image_id": image.image_id, "image_designer": image.image_designer}
    return {**plain, **{k: json.dumps(list(v)) for k, v in lists.items()}}


def write_submission(run_dir: Path, out: Path, data_dir: Path | None = None) -> tuple[str, int]:
    """Write the leaderboard CSV; returns the task and the number of rows."""
    task, records, results = _records(Path(run_dir))
    data = Path(data_dir) if data_dir is not None else Path(str(results.get("data", {}).get("dir", "")))
    release = load_release(data)
    cells = predictions_by_image(task, records, Path(run_dir) / "predictions.jsonl")
    for image in release.images:
        if image.image_id not in cells:
            raise AbductError(f"the run in {run_dir} has no prediction for image {image.image_id} (it covers "
                              f"{len(cells)} of {len(release.images)} images); the leaderboard file needs every image: "
                              "evaluate with --split all and no --limit")
    if release.form == "csv":
        header, rows = read_csv_rows(data / CSV_NAME)
        table = [[row[c] for c in header] + [cells[row["image_id"].strip()]] for _, row in rows]
    else:
        header = list(COLUMNS)
        table = [[_cells(image)[c] for c in header] + [cells[image.image_id]] for image in release.images]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([*header, "predictions"])
    writer.writerows(table)
    atomic_write_text(Path(out), "\ufeff" + buffer.getvalue())
    return task, len(table)
