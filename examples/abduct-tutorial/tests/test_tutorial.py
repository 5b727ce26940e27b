"""The tutorial plugin under abduct's contract tests, then `abduct eval` end to end."""

import json
from pathlib import Path

import numpy as np
from PIL import Image

from abduct_testing import ScorerContract, TaskContract, run_cli
from abduct_tutorial.model import BrightnessModel


def write_pictures(folder: Path, count: int, seed: int = 0) -> Path:
    """``count`` noisy pictures and their labels.json in ``folder``, alternately bright and dark."""
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

    def make_data(self, folder: Path) -> Path:
        return write_pictures(folder, count=40)  # three units of 16 pictures, so the resume test can stop midway


def test_eval_with_the_tutorial_model(tmp_path: Path) -> None:
    data = write_pictures(tmp_path / "data", count=10)
    for model, accuracy in (("tutorial-brightness", 100.0), ("tutorial-brightness,threshold=1.0", 50.0)):
        out = tmp_path / model  # at threshold 1.0 every picture is dark: half are right
        done = run_cli(["eval", "tutorial-light", "--model", model, "--data", str(data), "--out", str(out), "--quiet"])
        assert done.code == 0 and done.crash is None, done.err
        assert json.loads((out / "results.json").read_text())["metrics"] == {"accuracy": accuracy}
