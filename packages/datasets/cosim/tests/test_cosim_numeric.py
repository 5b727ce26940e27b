"""CoSIm's numbers depend only on the order of the four scores: scores scaled to the ends of
the float range (x1e300, x1e-300, subnormal multiples of 5e-324, both signs) give exactly the
metrics of the unscaled ones, through `abduct score` and through `abduct eval`; numbers that
are not finite are refused in one line (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct.host import EvalConfig, run_evaluation
from abduct_testing import EXTREME_SCALES, main, registry_with_models, scaled_models


def _score(tmp_path: Path, key: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    path = tmp_path / "p.json"
    path.write_text(text)
    code = main(["score", "cosim", "--predictions", str(path), "--answer-key", str(key), "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else captured.err


def test_score_is_the_same_at_every_scale(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = corpus / "val.json"
    labels = [r["answer_label"] for r in json.loads(key.read_text())]
    base = np.random.default_rng(1).integers(-3, 4, size=(len(labels), 4)).astype(np.float64)
    code, reference = _score(tmp_path, key, json.dumps(base.tolist()), capsys)
    assert code == 0
    expected = 100.0 * np.mean([int(np.argmax(row)) == label for row, label in zip(base, labels)])
    assert reference["accuracy"] == expected and 0.0 < expected < 100.0
    for scale in EXTREME_SCALES:
        scaled = (base * scale).tolist()
        assert all(np.isfinite(scaled).ravel()) and json.loads(json.dumps(scaled)) == scaled  # exact round trip
        code, out = _score(tmp_path, key, json.dumps(scaled), capsys)
        assert code == 0 and out == reference, scale
        code, out = _score(tmp_path, key, json.dumps({str(i): row for i, row in enumerate(scaled)}), capsys)
        assert code == 0 and out == reference, scale


def test_eval_is_the_same_at_every_scale(corpus: Path, tmp_path: Path) -> None:
    registry = registry_with_models("cosim-scaled", scaled_models())
    results = [run_evaluation(EvalConfig(task="cosim", model=name, data_dir=corpus, out_dir=tmp_path / name,
                                         quiet=True, use_cache=False), registry)
               for name in scaled_models()]
    reference = results[0]["metrics"]
    assert 0.0 < reference["accuracy"] < 100.0 and reference["n"] == 30
    for name, result in zip(scaled_models(), results):
        assert result["metrics"] == reference, name
    # the scores reach predictions.jsonl as they were: 1e300 and subnormal values included
    rows = [json.loads(line) for line in (tmp_path / "scaled-5" / "predictions.jsonl").read_text().splitlines()]
    assert any(0 < abs(s) < 2.3e-308 for r in rows for s in r["scores"])


@pytest.mark.parametrize("number, shown", [
    ("1e400", "inf"), ("-1e400", "-inf"), ("NaN", "nan"), ("-Infinity", "-inf"), ("9" * 400, "inf"),
    ("-" + "9" * 5000, "-inf"),
])
def test_numbers_no_float_holds_exit_2_in_one_line(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   number: str, shown: str) -> None:
    count = len(json.loads((corpus / "val.json").read_text()))
    rows = ["[0, 1, 2, 3]"] * count
    rows[7] = f"[0, {number}, 2, 3]"
    code, err = _score(tmp_path, corpus / "val.json", "[" + ", ".join(rows) + "]", capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"record 7, field 'scores[1]': not a finite number ({shown})" in err
