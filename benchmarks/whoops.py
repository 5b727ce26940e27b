"""WHOOPS!: how much the pipeline around the model costs, measured as ratios in one run.

1. loading: ``abduct_whoops.load_release`` (validation of every cell included) on a
   ``whoops_dataset.csv`` of N rows against pandas' ``read_csv`` followed by ``json.loads``
   of the four list columns (no validation), the usual way to read the file;
2. matching: ``abduct eval whoops-matching --model clip:tiny`` end to end (loading, folds,
   the scoring engine, tables by category and fold, writing outputs; caching off) divided by
   the model's own time to encode the run's unique images and texts once: the overhead (the
   synthetic captions are made distinct per image first, as the release's are); and a naive loop scoring every (image, caption) comparison on its own (the image
   encoded again for each of its 6 captions) against the run.

Usage: python benchmarks/whoops.py [--images 500] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from abduct import Settings, VisualInput
from abduct.host import EvalConfig, get_registry, load_model, run_evaluation
from abduct_whoops import load_release
from abduct_whoops.loader import read_csv_rows
from abduct_whoops.synth import synthesize

LIST_COLUMNS = ("crowd_captions", "crowd_explanations", "crowd_underspecified_captions", "question_answering_pairs")


def _best(fn: Any, repeat: int) -> tuple[Any, float]:
    best, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - started)
    return value, best


def _pandas(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, encoding="utf-8-sig")
    for column in LIST_COLUMNS:
        frame[column] = frame[column].map(json.loads)
    return frame


def _distinct_captions(data: Path) -> None:
    """Make every caption of the synthetic corpus its image's own, as in the release (where no
    two images share a caption): the image id is appended to each."""
    header, rows = read_csv_rows(data / "whoops_dataset.csv")
    for _, row in rows:
        tag = f" ({row['image_id']})"
        row["selected_caption"] += tag
        row["crowd_underspecified_captions"] = json.dumps(
            [c + tag for c in json.loads(row["crowd_underspecified_captions"])])
    with open(data / "whoops_dataset.csv", "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows([[row[c] for c in header] for _, row in rows])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = synthesize(Path(tmp) / "data", images=args.images, seed=0)
        _distinct_captions(data)
        csv_path = data / "whoops_dataset.csv"
        ours_load = _best(lambda: load_release(data), args.repeat)[1]
        frame, pandas_load = _best(lambda: _pandas(csv_path), args.repeat)
        assert len(frame) == args.images

        spec, batch = "clip:tiny,workers=0", 64

        def evaluate() -> dict[str, Any]:
            config = EvalConfig(task="whoops-matching", model=spec, data_dir=data, out_dir=Path(tmp) / "run",
                                batch_size=batch, quiet=True, use_cache=False)
            return run_evaluation(config)

        _, eval_seconds = _best(evaluate, args.repeat)
        model = load_model(spec, Settings(batch_size=batch), get_registry()).model
        images = load_release(data).images
        visuals = [VisualInput(i.path) for i in images]
        texts = list(dict.fromkeys(t for i in images for t in (i.selected_caption, *i.crowd_underspecified_captions)))

        def encode_once() -> None:
            for k in range(0, len(visuals), batch):
                model.encode_visual(visuals[k:k + batch])
            for k in range(0, len(texts), batch):
                model.encode_text(texts[k:k + batch])

        _, model_seconds = _best(encode_once, args.repeat)
        pairs = [(VisualInput(i.path), t) for i in images for t in (i.selected_caption, *i.crowd_underspecified_captions)]

        def naive() -> None:
            for k in range(0, len(pairs), batch):
                chunk = pairs[k:k + batch]
                model.encode_visual([v for v, _ in chunk])
                model.encode_text([t for _, t in chunk])

        _, naive_seconds = _best(naive, 1)
    rows = [
        ("load release (ours, validated) / pandas read_csv + json.loads", ours_load, pandas_load),
        ("whoops-matching clip:tiny end to end / model encoding once", eval_seconds, model_seconds),
        ("naive per-comparison scoring / whoops-matching end to end", naive_seconds, eval_seconds),
    ]
    if args.json:
        names = ("load_vs_pandas", "eval_vs_model_encoding", "naive_vs_eval")
        print(json.dumps({"images": args.images, **{name: {"a_seconds": a, "b_seconds": b, "ratio": a / b}
                                                        for name, (_, a, b) in zip(names, rows)}}, indent=2))
        return
    print(f"WHOOPS! synthetic corpus, {args.images} images ({5 * args.images} comparisons), best of {args.repeat}")
    print(f"{'measure':<66} {'a (s)':>8} {'b (s)':>8} {'a/b':>6}")
    for name, a, b in rows:
        print(f"{name:<66} {a:>8.3f} {b:>8.3f} {a / b:>6.2f}")


if __name__ == "__main__":
    main()
