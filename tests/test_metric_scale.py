"""One scale per metric: CIDEr-D of the same texts is the same number in `abduct metric`, in a
task's results.json (and its declared range), on its report page and in the published rows set
beside it (docs/reading-the-numbers.md, "One scale per metric")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct import TEXT_METRICS
from conftest import abduct


def test_cider_is_one_number_in_the_command_the_results_the_report_and_the_published_rows(tmp_path: Path) -> None:
    pytest.importorskip("abduct_whoops")
    data, out = tmp_path / "whoops", tmp_path / "run"
    assert abduct("whoops", "synth", "--images", "10", "--out", str(data)).returncode == 0
    run = abduct("eval", "whoops-captioning", "--model", "random", "--data", str(data), "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    results = json.loads((out / "results.json").read_text())
    cider = results["metrics"]["cider"]
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    (tmp_path / "p.json").write_text(json.dumps({str(r["image_id"]): r["prediction"] for r in records}))
    (tmp_path / "r.json").write_text(json.dumps({str(r["image_id"]): r["references"] for r in records}))
    files = ["--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json")]

    command = abduct("metric", "cider", *files, "--json")
    assert command.returncode == 0, command.stderr
    assert json.loads(command.stdout)["cider"] == pytest.approx(cider, abs=1e-9)
    text = abduct("metric", "cider", *files)
    assert f"cider: {cider:.6f}" in text.stdout
    assert cider > 10  # not pycocoevalcap's own scale, which is at most 10 (this data's value is about 42)

    declared = results["metric_info"]["cider"]
    assert declared == TEXT_METRICS["cider"].as_json() and declared["range"] == [0.0, 1000.0]
    report = (out / "report.md").read_text()
    assert f"| cider | {cider:.6g} " in report  # the report table, same number

    published = json.loads((Path(__file__).parents[1] / "packages/datasets/whoops/src/abduct_whoops/published.json")
                           .read_text())
    ciders = [row["metrics"]["cider"] for row in published["rows"] if "cider" in row["metrics"]]
    assert ciders and max(ciders) > 10  # the paper's "CIDEr 120": the same x100 scale as the run's
