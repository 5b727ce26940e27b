"""Property-based fuzz (hypothesis) of NL-EYE's inputs through the CLI: the CSV under
`abduct eval` and both official predictions formats under `abduct score` end with exit 0, 1
or 2 and one line, never a traceback or a half-written --out."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from abduct_nleye.synth import synthesize
from abduct_testing import fuzz_cli_input


def _corpus(directory: Path) -> None:
    synthesize(directory, samples=6, seed=0)
    with open(directory / "test_set.csv", encoding="utf-8-sig", newline="") as handle:
        ids = [row[0] for row in list(csv.reader(handle))[1:]]
    (directory / "triplet.json").write_text(json.dumps({sid: [1, 2] for sid in ids}))
    (directory / "pairs.json").write_text(json.dumps({sid: [0.7, 0.2] for sid in ids}))


def _score(task: str, predictions: str) -> object:
    return lambda d: ["score", task, "--predictions", str(d / predictions), "--answer-key", str(d / "test_set.csv")]


test_fuzz_csv = fuzz_cli_input(
    _corpus, "test_set.csv",
    lambda d: ["eval", "nleye-triplet", "--model", "random", "--data", str(d), "--out", str(d / "out"), "--quiet"])
test_fuzz_triplet_predictions = fuzz_cli_input(_corpus, "triplet.json", _score("nleye-triplet", "triplet.json"),  # type: ignore[arg-type]
                                               out=None)
test_fuzz_pairs_predictions = fuzz_cli_input(_corpus, "pairs.json", _score("nleye-pairs", "pairs.json"),  # type: ignore[arg-type]
                                             out=None)
