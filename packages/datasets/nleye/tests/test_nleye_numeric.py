"""NL-EYE's numbers depend only on the order of the two scores: scores scaled to the ends of
the float range (x1e300, x1e-300, subnormal multiples of 5e-324, both signs) give exactly the
metrics of the unscaled ones, through `abduct score nleye-pairs` and through `abduct eval` of
both tasks; numbers that are not finite are refused in one line (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct.host import EvalConfig, run_evaluation
from abduct_nleye.loader import load_csv
from abduct_testing import EXTREME_SCALES, main, registry_with_models, scaled_models


def _score(tmp_path: Path, key: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    path = tmp_path / "p.json"
    path.write_text(text)
    code = main(["score", "nleye-pairs", "--predictions", str(path), "--answer-key", str(key), "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else captured.err


def test_pairs_score_is_the_same_at_every_scale(corpus: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    key = corpus / "test_set.csv"
    samples = load_csv(key)
    base = np.random.default_rng(2).integers(-3, 4, size=(len(samples), 2)).astype(np.float64)
    code, reference = _score(tmp_path, key, json.dumps({s.sample_id: row.tolist() for s, row in zip(samples, base)}),
                             capsys)
    assert code == 0
    wins = [row[s.gold - 1] > row[2 - s.gold] for s, row in zip(samples, base)]
    assert reference["accuracy"] == 100.0 * sum(wins) / len(wins) and 0 < sum(wins) < len(wins)
    assert 0 < reference["ties"] < len(samples)
    for scale in EXTREME_SCALES:
        scaled = {s.sample_id: (row * scale).tolist() for s, row in zip(samples, base)}
        assert json.loads(json.dumps(scaled)) == scaled  # exact round trip, subnormals included
        code, out = _score(tmp_path, key, json.dumps(scaled), capsys)
        assert code == 0 and out == reference, scale


@pytest.mark.parametrize("task", ["nleye-triplet", "nleye-pairs"])
def test_eval_is_the_same_at_every_scale(corpus: Path, tmp_path: Path, task: str) -> None:
    registry = registry_with_models("nleye-scaled", scaled_models())
    results = [run_evaluation(EvalConfig(task=task, model=name, data_dir=corpus, out_dir=tmp_path / name,
                                         quiet=True, use_cache=False), registry)
               for name in scaled_models()]
    reference = results[0]["metrics"]
    first = "consistency_accuracy" if task == "nleye-triplet" else "accuracy"
    assert 0.0 < reference[first] < 100.0 and reference["n"] == 18
    for name, result in zip(scaled_models(), results):
        assert result["metrics"] == reference, name


@pytest.mark.parametrize("number, shown", [
    ("1e400", "inf"), ("-1e400", "-inf"), ("NaN", "nan"), ("Infinity", "inf"), ("9" * 400, "inf"),
    ("-" + "9" * 5000, "-inf"),
])
def test_numbers_no_float_holds_exit_2_in_one_line(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   number: str, shown: str) -> None:
    ids = [s.sample_id for s in load_csv(corpus / "test_set.csv")]
    body = ", ".join(f'"{sid}": [{number if i == 3 else 1}, 2]' for i, sid in enumerate(ids))
    code, err = _score(tmp_path, corpus / "test_set.csv", "{" + body + "}", capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"record {ids[3]}, field 'score_h1': expected a finite number, got {shown}" in err
