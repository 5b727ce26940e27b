"""The tutorial plugin under the core's contract tests, then `abduct eval` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

from abduct_testing import ScorerContract, TaskContract, run_cli
from abduct_tutorial.model import BrightnessModel


def write_pictures(folder: Path, count: int = 8, seed: int = 0) -> Path:
    """``count`` noisy pictures, alternately bright (grey about 190) and dark (about 60)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    labels = {}
    for i in range(count):
        label, grey = ("bright", 190) if i % 2 == 0 else ("dark", 60)
        pixels = np.clip(grey + rng.integers(-50, 50, size=(24, 32, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(pixels).save(folder / f"{i:02d}.png")
        labels[f"{i:02d}.png"] = label
    (folder / "labels.json").write_text(json.dumps(labels))
    return folder


class TestModel(ScorerContract):
    def make_scorer(self) -> object:
        return BrightnessModel(threshold=0.5)


class TestTask(TaskContract):
    task_name = "tutorial-light"

    def make_data(self, tmp_path: Path) -> Path:
        return write_pictures(tmp_path, count=40)  # more than one unit of 16, so a run can stop midway


def _eval(data: Path, out: Path, model: str) -> dict[str, float]:
    outcome = run_cli(["eval", "tutorial-light", "--model", model, "--data", str(data), "--out", str(out), "--quiet"])
    assert outcome.code == 0 and outcome.crash is None, outcome.err
    metrics: dict[str, float] = json.loads((out / "results.json").read_text())["metrics"]
    return metrics


def test_eval_with_the_tutorial_model(tmp_path: Path) -> None:
    data = write_pictures(tmp_path / "data", count=10)
    assert _eval(data, tmp_path / "run", "tutorial-brightness") == {"accuracy": 100.0, "n": 10}
    # the option reaches the model, typed: at threshold 1.0 every picture is dark, so half are right
    assert _eval(data, tmp_path / "high", "tutorial-brightness,threshold=1.0")["accuracy"] == 50.0
    records = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == sorted(json.loads((data / "labels.json").read_text()))


def test_a_bad_option_or_label_is_one_line_and_no_output(tmp_path: Path) -> None:
    data = write_pictures(tmp_path / "data", count=4)
    argv = ["eval", "tutorial-light", "--data", str(data), "--out", str(tmp_path / "out"), "--quiet"]
    refused = run_cli([*argv, "--model", "tutorial-brightness,threshold=high"])
    assert refused.code == 2 and refused.crash is None and "'high' is not a number" in refused.err
    labels = json.loads((data / "labels.json").read_text())
    labels["02.png"] = "grey"
    (data / "labels.json").write_text(json.dumps(labels))
    outcome = run_cli([*argv, "--model", "tutorial-brightness"])
    assert outcome.code == 2 and outcome.crash is None
    assert outcome.err.count("\n") == 1 and "labels.json, record 02.png: label must be one of" in outcome.err
    assert not (tmp_path / "out" / "results.json").exists()


def test_check_reads_the_dataset_and_a_dataset_option_is_refused(tmp_path: Path) -> None:
    """``abduct check`` is the dataset's check; the dataset has no options, so one given is one
    line, and so is another dataset than the task's, before any output is written."""
    data = write_pictures(tmp_path / "data", count=4)
    checked = run_cli(["check", "tutorial-light", "--data", str(data)])
    assert checked.code == 0 and checked.crash is None and "no problems found" in checked.out
    argv = ["eval", "tutorial-light", "--model", "random", "--data", str(data), "--out", str(tmp_path / "out"), "--quiet"]
    for option, message in (("tutorial-light,labels=other.json", "has no option 'labels'"),
                            ("toy,labels=other.json", "unknown dataset 'toy'")):
        refused = run_cli([*argv, "--dataset", option])
        assert refused.code == 2 and refused.crash is None and message in refused.err, refused.err
        assert refused.err.count("\n") == 1
    assert not (tmp_path / "out").exists()
    (data / "labels.json").write_text('{"9.png": "dark"}')
    checked = run_cli(["check", "tutorial-light", "--data", str(data)])
    assert checked.code == 1 and "labels.json, record 9.png: picture not found" in checked.out
