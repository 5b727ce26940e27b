"""abduct-var with abduct-video, abduct-clip and abduct-metrics installed together, through the
CLI: synthesise videos, train the small generator briefly, evaluate it and random on
var-explanation, then score the submission the run wrote with `abduct score var`."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import abduct


def test_synth_train_eval_score(tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = abduct("var", "synth", "--out", str(data), "--examples", "48")
    assert done.returncode == 0, done.stderr
    assert abduct("var", "check", "--data", str(data)).returncode == 0
    # 100 steps: CIDEr ~940-1000 against random's ~80 on seeds 0-2 (25 steps already give ~580)
    done = abduct("train", "var", "--data", str(data), "--out", str(tmp_path / "ckpt"), "--steps", "100",
                  "--device", "cpu", "--quiet")
    assert done.returncode == 0, done.stderr
    task = "var-explanation,meteor=false"
    metrics = {}
    for label, model in (("random", "random"), ("trained", f"var-gen:{tmp_path / 'ckpt' / 'last.pt'}")):
        done = abduct("eval", task, "--model", model, "--data", str(data), "--out", str(tmp_path / label),
                      "--json", "--quiet", "--no-cache")
        assert done.returncode == 0, done.stderr
        metrics[label] = json.loads(done.stdout)["metrics"]
    assert metrics["trained"]["cider"] > metrics["random"]["cider"] + 100
    assert metrics["trained"]["bleu_4"] > metrics["random"]["bleu_4"]
    submission = tmp_path / "trained" / "submission.json"
    assert abduct("var", "validate-submission", "--predictions", str(submission), "--data", str(data),
                  "--events", "hypothesis").returncode == 0
    done = abduct("score", "var", "--predictions", str(submission), "--json")
    assert done.returncode == 0, done.stderr
    official = json.loads(done.stdout)["all"]
    assert {k: official[k] for k in ("bleu_1", "bleu_4", "rouge_l", "cider")} == {
        k: metrics["trained"][k] for k in ("bleu_1", "bleu_4", "rouge_l", "cider")}
    assert 0 <= official["meteor"] <= 100
