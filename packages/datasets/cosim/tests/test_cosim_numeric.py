"""CoSIm's numbers at the ends of the float range: the headline is the authors' arithmetic
(the first maximum of the four scores as float32), computed here independently with numpy, at
every scale (x1e300, x1e-300, subnormal multiples of 5e-324, both signs); the full-precision
accuracy (float64) equals the unscaled one's at every scale, through `abduct score` and
through `abduct eval`; +-inf scores are ranked, NaN is refused in one line (exit 2)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct.host import EvalConfig, run_evaluation
from abduct_cosim.official import OfficialArithmeticWarning
from abduct_testing import EXTREME_SCALES, main, registry_with_models, scaled_models


def _score(tmp_path: Path, key: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    path = tmp_path / "p.json"
    path.write_text(text)
    code = main(["score", "cosim", "--predictions", str(path), "--answer-key", str(key), "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else captured.err


def official_accuracy(rows: Any, labels: list[int]) -> float:
    """The authors' definition: ``logit.max(1)`` of float32 logits, the first maximum winning."""
    with np.errstate(over="ignore"):
        picked = [int(np.argmax(np.asarray(row, dtype=np.float32))) for row in rows]
    return 100.0 * sum(p == label for p, label in zip(picked, labels)) / len(labels)


def full_precision(out: dict[str, Any]) -> float:
    return float(out.get("full_precision", {}).get("accuracy", out["accuracy"]))


def test_score_at_every_scale_is_official_with_full_precision_beside(corpus: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    key = corpus / "val.json"
    labels = [r["answer_label"] for r in json.loads(key.read_text())]
    base = np.random.default_rng(1).integers(-3, 4, size=(len(labels), 4)).astype(np.float64)
    code, reference = _score(tmp_path, key, json.dumps(base.tolist()), capsys)
    assert code == 0 and "full_precision" not in reference  # small integers: float32 loses nothing
    expected = 100.0 * np.mean([int(np.argmax(row)) == label for row, label in zip(base, labels)])
    assert reference["accuracy"] == expected and 0.0 < expected < 100.0
    differed = 0
    for scale in EXTREME_SCALES:
        scaled = (base * scale).tolist()
        assert all(np.isfinite(scaled).ravel()) and json.loads(json.dumps(scaled)) == scaled  # exact round trip
        for text in (json.dumps(scaled), json.dumps({str(i): row for i, row in enumerate(scaled)})):
            code, out = _score(tmp_path, key, text, capsys)
            assert code == 0 and out["accuracy"] == official_accuracy(scaled, labels), scale
            assert full_precision(out) == reference["accuracy"], scale
            differed += "full_precision" in out
    assert differed  # float32 ties some scaled scores (1e300 is inf there, 1e-300 is 0)


def test_eval_at_every_scale_is_official_with_full_precision_beside(corpus: Path, tmp_path: Path) -> None:
    registry = registry_with_models("cosim-scaled", scaled_models())
    results, warned = [], []
    for name in scaled_models():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(run_evaluation(EvalConfig(task="cosim", model=name, data_dir=corpus, out_dir=tmp_path / name,
                                                     quiet=True, use_cache=False), registry))
        warned.append([str(w.message) for w in caught if issubclass(w.category, OfficialArithmeticWarning)])
    reference = results[0]["metrics"]
    assert 0.0 < reference["accuracy"] < 100.0 and reference["n"] == 30
    assert "full_precision" not in results[0]["details"]
    assert any(warned)  # 1e300 is inf in float32, 1e-300 is 0
    for name, result, lines in zip(scaled_models(), results, warned):
        assert len(lines) == ("full_precision" in result["details"]) and all(x.startswith("cosim: ") for x in lines)
        rows = [json.loads(line) for line in (tmp_path / name / "predictions.jsonl").read_text().splitlines()]
        assert result["metrics"]["accuracy"] == official_accuracy([r["scores"] for r in rows], [r["label"] for r in rows])
        full = result["details"].get("full_precision", {}).get("accuracy", result["metrics"]["accuracy"])
        assert full == reference["accuracy"], name
    # the scores reach predictions.jsonl as they were: 1e300 and subnormal values included
    rows = [json.loads(line) for line in (tmp_path / "scaled-5" / "predictions.jsonl").read_text().splitlines()]
    assert any(0 < abs(s) < 2.3e-308 for r in rows for s in r["scores"])


@pytest.mark.parametrize("number, value", [
    ("1e400", np.inf), ("-1e400", -np.inf), ("-Infinity", -np.inf), ("Infinity", np.inf), ("9" * 400, np.inf),
    ("-" + "9" * 5000, -np.inf),
])
def test_infinite_scores_are_ranked(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    number: str, value: float) -> None:
    """+-inf (and numbers beyond the float range, read as +-inf) are compared as float32
    compares them: the authors' code ranks them."""
    raw = json.loads((corpus / "val.json").read_text())
    rows: list[list[float]] = [[0, 1, 2, 3]] * len(raw)
    texts = [json.dumps(r) for r in rows]
    texts[7] = f"[0, {number}, 2, 3]"
    code, out = _score(tmp_path, corpus / "val.json", "[" + ", ".join(texts) + "]", capsys)
    assert code == 0
    rows[7] = [0, value, 2, 3]
    assert out["accuracy"] == official_accuracy(rows, [r["answer_label"] for r in raw]) and "full_precision" not in out


def test_nan_exits_2_in_one_line(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    count = len(json.loads((corpus / "val.json").read_text()))
    rows = ["[0, 1, 2, 3]"] * count
    rows[7] = "[0, NaN, 2, 3]"
    code, err = _score(tmp_path, corpus / "val.json", "[" + ", ".join(rows) + "]", capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "record 7, field 'scores[1]': NaN is not a score" in err
