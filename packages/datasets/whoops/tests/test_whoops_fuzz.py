"""Property-based fuzz (hypothesis) of WHOOPS!'s inputs through the CLI: the dataset CSV under
`abduct eval` and a matching predictions file under `abduct score` end with exit 0, 1 or 2 and
one line, never a traceback or a half-written --out."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from abduct_testing import fuzz_cli_input
from abduct_whoops.synth import synthesize


def _corpus(directory: Path) -> None:
    synthesize(directory, images=5, seed=0)


def _with_predictions(directory: Path) -> None:
    synthesize(directory, images=5, seed=0)
    with open(directory / "whoops_dataset.csv", encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    predictions = {row["image_id"]: [[1.0, 0.0]] * len(json.loads(row["crowd_underspecified_captions"]))
                   for row in rows}
    (directory / "preds.json").write_text(json.dumps(predictions))


test_fuzz_dataset_csv = fuzz_cli_input(
    _corpus, "whoops_dataset.csv",
    lambda d: ["eval", "whoops-matching", "--model", "random", "--data", str(d), "--out", str(d / "out"), "--quiet"])
test_fuzz_matching_predictions = fuzz_cli_input(
    _with_predictions, "preds.json",
    lambda d: ["score", "whoops-matching", "--predictions", str(d / "preds.json"),
               "--answer-key", str(d / "whoops_dataset.csv")],
    out=None)
