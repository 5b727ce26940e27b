"""The three tasks end to end: contracts, CLI on a synthesised corpus, and agreement of the
evaluation path with the official-format scoring path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sherlock_test_util import write_json

from abduct.baselines import RandomScorer
from abduct.cli import main
from abduct.evaluate import EvalConfig, load_task, run_evaluation
from abduct.testing import TaskContract
from abduct_sherlock.layout import ImageRoots
from abduct_sherlock.leaderboard import read_instances
from abduct_sherlock.synth import synthesize


class _SherlockContract(TaskContract):
    def make_data(self, tmp_path: Path) -> Path:
        return synthesize(tmp_path, images=40, seed=1, chunk_instances=20)


class TestRetrievalContract(_SherlockContract):
    task_name = "sherlock-retrieval"


class TestLocalizationContract(_SherlockContract):
    task_name = "sherlock-localization"


class TestComparisonContract(_SherlockContract):
    task_name = "sherlock-comparison"


def _eval(data: Path, out: Path, task: str, model: str = "random", seed: int = 0) -> dict[str, Any]:
    return run_evaluation(EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True,
                                     use_cache=False, seed=seed))


def test_synth_then_eval_all_three_with_random_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    assert main(["sherlock", "synth", "--out", str(data), "--images", "60"]) == 0
    results = {}
    for task in ("retrieval", "localization", "comparison"):
        out = tmp_path / task
        assert main(["eval", f"sherlock-{task}", "--model", "random", "--data", str(data), "--out", str(out), "--quiet"]) == 0
        results[task] = json.loads((out / "results.json").read_text())
    capsys.readouterr()
    retrieval = results["retrieval"]
    assert set(retrieval["metrics"]) >= {"im2txt", "txt2im", "p_at_1"}
    per_chunk = retrieval["details"]["per_chunk"]
    assert len(per_chunk) == retrieval["metrics"]["chunks"] >= 1
    assert retrieval["metrics"]["im2txt"] == pytest.approx(np.mean([c["im2txt"] for c in per_chunk.values()]))
    # chance: a random scorer's mean rank is near (N+1)/2
    assert abs(retrieval["metrics"]["im2txt"] - retrieval["metrics"]["chance_mean_rank"]) < 0.25 * retrieval["metrics"]["chance_mean_rank"]
    assert set(results["localization"]["metrics"]) >= {"gt_accuracy", "auto_accuracy"}
    assert 5 < results["localization"]["metrics"]["gt_accuracy"] < 60
    assert set(results["comparison"]["metrics"]) >= {"accuracy", "human", "oracle"}
    assert results["comparison"]["metrics"]["oracle"] > results["comparison"]["metrics"]["human"] > 20


def test_constant_scorer_hits_the_tie_rules(corpus: Path, tmp_path: Path) -> None:
    retrieval = _eval(corpus, tmp_path / "r", "sherlock-retrieval", "constant")["metrics"]
    assert retrieval["p_at_1"] == 0.0 and retrieval["im2txt"] == retrieval["chance_mean_rank"]
    assert _eval(corpus, tmp_path / "l", "sherlock-localization", "constant")["metrics"]["gt_accuracy"] < 30


def _random_predictions(data: Path, path: Path, seed: int) -> dict[str, float]:
    """What the random scorer gives every row of an instance file, by test id."""
    rows = read_instances(path, ImageRoots.for_data_dir(data))
    scores = RandomScorer(seed).score([r.visual for r in rows], [r.inference for r in rows])
    return dict(zip((r.test_id for r in rows), scores.tolist()))


def test_evaluation_equals_official_scoring_of_the_same_scores(corpus: Path, tmp_path: Path) -> None:
    seed = 5
    folder = corpus / "val_comparison"
    preds = write_json(tmp_path / "c.json", _random_predictions(corpus, folder / "val_comparison_instances.json", seed))
    scored = load_task("sherlock-comparison").score_files(preds, folder / "val_comparison_answer_key.json")
    evaluated = _eval(corpus, tmp_path / "c", "sherlock-comparison", seed=seed)["metrics"]
    assert {k: evaluated[k] for k in scored} == scored

    folder = corpus / "val_localization"
    preds = write_json(tmp_path / "l.json", _random_predictions(corpus, folder / "val_localization_instances.json", seed))
    scored = load_task("sherlock-localization").score_files(preds, folder / "val_localization_answer_key.json")
    evaluated = _eval(corpus, tmp_path / "l", "sherlock-localization", seed=seed)["metrics"]
    assert {k: evaluated[k] for k in scored} == scored

    result = _eval(corpus, tmp_path / "r", "sherlock-retrieval", seed=seed)
    for k, chunk in result["details"]["per_chunk"].items():
        folder = corpus / "val_retrieval"
        preds = write_json(tmp_path / f"r{k}.json",
                           _random_predictions(corpus, folder / f"val_retrieval_{k}_instances.json", seed))
        scored = load_task("sherlock-retrieval").score_files(preds, folder / f"val_retrieval_{k}_answer_key.json")
        assert {n: chunk[n] for n in scored} == scored


def test_localization_from_annotations_and_proposals_equals_leaderboard_files(corpus: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"  # the random scorer hashes image paths: one directory for both
    shutil.copytree(corpus, data)
    from_leaderboard = _eval(data, tmp_path / "b", "sherlock-localization")
    shutil.rmtree(data / "val_localization")
    from_annotations = _eval(data, tmp_path / "a", "sherlock-localization")
    assert from_annotations["details"]["source"] == "annotations"
    assert from_leaderboard["details"]["source"] == "leaderboard"
    assert from_annotations["metrics"] == from_leaderboard["metrics"]
    (data / "sherlock_val_autoboxes.json").unlink()
    gt_only = _eval(data, tmp_path / "c", "sherlock-localization")["metrics"]
    assert "auto_accuracy" not in gt_only and gt_only["gt_accuracy"] == from_leaderboard["metrics"]["gt_accuracy"]


def test_train_split_is_refused(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "sherlock-retrieval", "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "o"),
                 "--split", "train", "--quiet"])
    assert code == 2 and "validation split" in capsys.readouterr().err


def test_no_heavy_imports() -> None:
    import subprocess
    import sys

    code = ("import sys, abduct_sherlock.plugin, abduct_sherlock.tasks, abduct_sherlock.synth, "
            "abduct_sherlock.submission, abduct_sherlock.check; "
            "assert not {'torch', 'open_clip', 'transformers', 'scipy'} & set(sys.modules), sys.modules.keys()")
    subprocess.run([sys.executable, "-c", code], check=True)
