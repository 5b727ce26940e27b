"""Sherlock and the metrics package driven through the core CLI, as a user would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import abduct, abduct_process

TASKS = {
    "sherlock-retrieval": {"im2txt", "txt2im", "p_at_1"},
    "sherlock-localization": {"gt_accuracy", "auto_accuracy"},
    "sherlock-comparison": {"accuracy", "human", "oracle"},
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sherlock") / "synth"
    made = abduct("sherlock", "synth", "--out", str(out), "--images", "60", "--seed", "1")
    assert made.returncode == 0, made.stderr
    return out


@pytest.mark.parametrize("task", sorted(TASKS))
def test_eval_every_sherlock_task_with_random(corpus: Path, tmp_path: Path, task: str) -> None:
    run = abduct("eval", task, "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "o"), "--quiet", "--json")
    assert run.returncode == 0, run.stderr
    metrics = json.loads(run.stdout)["metrics"]
    assert TASKS[task] <= set(metrics)
    assert json.loads((tmp_path / "o" / "results.json").read_text())["metrics"] == metrics


def test_score_retrieval_key_as_the_leaderboard_does(corpus: Path, tmp_path: Path) -> None:
    """A perfect predictor (1 on true pairs, 0 elsewhere) scores mean rank 1 and P@1 100."""
    key_path = corpus / "val_retrieval" / "val_retrieval_0_answer_key.json"
    key = json.loads(key_path.read_text())
    perfect = {tid: float(pair[0] == pair[1]) for tid, pair in key.items()}
    (tmp_path / "p.json").write_text(json.dumps(perfect))
    scored = abduct("score", "sherlock-retrieval", "--predictions", str(tmp_path / "p.json"),
                    "--answer-key", str(key_path), "--json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout) == {"im2txt": 1.0, "txt2im": 1.0, "p_at_1": 100.0}
    first = sorted(perfect)[0]
    perfect[first] = float("nan")
    (tmp_path / "p.json").write_text(json.dumps(perfect))
    bad = abduct_process("score", "sherlock-retrieval", "--predictions", str(tmp_path / "p.json"),
                         "--answer-key", str(key_path), "--json")  # the exit status as the shell sees it
    assert bad.returncode == 2 and first in bad.stderr and "Traceback" not in bad.stderr


def test_metric_cli_matches_identical_texts(tmp_path: Path) -> None:
    preds = {"a": "a man rides a horse on the beach", "b": "two dogs play in the snow"}
    (tmp_path / "p.json").write_text(json.dumps(preds))
    (tmp_path / "r.json").write_text(json.dumps({k: [v] for k, v in preds.items()}))
    run = abduct("metric", "bleu", "--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json"), "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["bleu_4"] == pytest.approx(100.0, abs=1e-4)  # x100
    (tmp_path / "r.json").write_text(json.dumps({"a": [preds["a"]], "b": []}))
    bad = abduct_process("metric", "bleu", "--predictions", str(tmp_path / "p.json"), "--references",
                         str(tmp_path / "r.json"))  # the exit status as the shell sees it
    assert bad.returncode == 2
    assert "r.json, record b: empty reference list" in bad.stderr
    # the in-process runs that the other tests make answer as the process does
    here = abduct("metric", "bleu", "--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json"))
    assert (here.returncode, here.stdout, here.stderr) == (bad.returncode, bad.stdout, bad.stderr)
