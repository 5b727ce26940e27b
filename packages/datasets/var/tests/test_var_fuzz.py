"""Property-based fuzz (hypothesis) of VAR's inputs through the CLI: the annotation file under
`abduct var check` and a submission under `abduct var validate-submission` end with exit 0, 1
or 2 and one line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from abduct_testing import fuzz_cli_input
from abduct_var.loader import load_split
from abduct_var.submission import Entry, build_submission
from abduct_var.synth import synthesize


def _corpus(directory: Path) -> None:
    synthesize(directory, examples=4, seed=0)


def _with_submission(directory: Path) -> None:
    _corpus(directory)
    examples, _ = load_split(directory, "val")
    entries = [Entry(x.id, i, e.sentence, e.sentence, i == x.hypothesis) for x in examples for i, e in enumerate(x.counted)]
    (directory / "submission.json").write_text(json.dumps(build_submission(entries)))


test_fuzz_annotations = fuzz_cli_input(
    _corpus, "var_val_v1.0.json", lambda d: ["var", "check", "--data", str(d)], out=None)
test_fuzz_submission = fuzz_cli_input(
    _with_submission, "submission.json",
    lambda d: ["var", "validate-submission", "--predictions", str(d / "submission.json"), "--data", str(d)],
    out=None)
