"""Property-based fuzz (hypothesis) of CoSIm's inputs through the CLI: the annotation file under
`abduct eval` and the official predictions format under `abduct score` end with exit 0, 1 or 2
and one line, never a traceback or a half-written --out."""

from __future__ import annotations

import json
from pathlib import Path

from abduct_cosim.synth import synthesize
from abduct_testing import fuzz_cli_input


def _corpus(directory: Path) -> None:
    synthesize(directory, train=4, val=8, seed=0)
    (directory / "preds.json").write_text(json.dumps([[0.1 * k + i for k in range(4)] for i in range(8)]))


test_fuzz_val_file = fuzz_cli_input(
    _corpus, "val.json",
    lambda d: ["eval", "cosim", "--model", "random", "--data", str(d), "--out", str(d / "out"), "--quiet"])
test_fuzz_predictions = fuzz_cli_input(
    _corpus, "preds.json",
    lambda d: ["score", "cosim", "--predictions", str(d / "preds.json"), "--answer-key", str(d / "val.json")],
    out=None)
