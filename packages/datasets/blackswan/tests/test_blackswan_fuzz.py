"""Property-based fuzz (hypothesis) of BlackSwan's inputs through the CLI: the MCQ and Y/N
question files under `abduct eval`, and the submission file under `abduct score` and `abduct
blackswan validate`, end with exit 0, 1 or 2 and one line, never a traceback or a half-written
--out."""

from __future__ import annotations

import json
from pathlib import Path

from abduct_blackswan.synth import synthesize
from abduct_testing import fuzz_cli_input

VALIDATION = {"MCQ": "MCQ/BlackSwanSuite_MCQ_Val.jsonl", "YN": "YN/BlackSwanSuite_YN_Val.jsonl"}


def _corpus(directory: Path) -> None:
    synthesize(directory, videos=3, seed=0)
    ids = [json.loads(line)["q_id"] for line in (directory / VALIDATION["MCQ"]).read_text().splitlines()]
    (directory / "challenge.json").write_text(json.dumps({str(q): 1 for q in ids}))


def _eval(task: str) -> object:
    return lambda d: ["eval", task, "--model", "random", "--data", str(d), "--out", str(d / "out"), "--quiet",
                      "--no-cache"]


test_fuzz_mcq_file = fuzz_cli_input(_corpus, VALIDATION["MCQ"], _eval("blackswan-mcq"), max_examples=25)  # type: ignore[arg-type]
test_fuzz_yn_file = fuzz_cli_input(_corpus, VALIDATION["YN"], _eval("blackswan-yn"), max_examples=25)  # type: ignore[arg-type]
test_fuzz_submission_scored = fuzz_cli_input(
    _corpus, "challenge.json",
    lambda d: ["score", "blackswan-mcq", "--predictions", str(d / "challenge.json"), "--answer-key", str(d)], out=None)
test_fuzz_submission_validated = fuzz_cli_input(
    _corpus, "challenge.json",
    lambda d: ["blackswan", "validate", str(d / "challenge.json"), "--data", str(d), "--split", "validation"], out=None)
