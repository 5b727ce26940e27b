from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct.cli import main
from abduct.testing import ScorerContract, TaskContract
from abduct_plugin_example.data import write_dataset
from abduct_plugin_example.scorer import MeanColorScorer


class TestScorer(ScorerContract):
    def make_scorer(self) -> object:
        return MeanColorScorer()


class TestTask(TaskContract):
    task_name = "example-colors"

    def make_data(self, tmp_path: Path) -> Path:
        write_dataset(tmp_path, items=20)
        return tmp_path


def test_installed_plugin_is_discovered(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "--json"]) == 0
    assert "example-colors" in {t["name"] for t in json.loads(capsys.readouterr().out)}


def test_make_data_eval_and_score_through_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, out = tmp_path / "data", tmp_path / "out"
    assert main(["example", "make-data", "--out", str(data), "--items", "24"]) == 0
    assert main(["eval", "example-colors", "--model", "example-color", "--data", str(data),
                 "--out", str(out), "--quiet", "--no-cache"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["metrics"] == {"accuracy": 100.0, "n": 24}
    assert main(["eval", "example-colors", "--model", "random", "--data", str(data),
                 "--out", str(tmp_path / "rnd"), "--quiet"]) == 0
    assert json.loads((tmp_path / "rnd" / "results.json").read_text())["metrics"]["accuracy"] < 60

    predictions = {json.loads(line)["id"]: json.loads(line)["choice"] for line in (out / "predictions.jsonl").read_text().splitlines()}
    (tmp_path / "p.json").write_text(json.dumps(predictions))
    capsys.readouterr()
    assert main(["score", "example-colors", "--predictions", str(tmp_path / "p.json"),
                 "--answer-key", str(data / "answers.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"accuracy": 100.0}

    del predictions["q0003"]
    (tmp_path / "p.json").write_text(json.dumps(predictions))
    assert main(["score", "example-colors", "--predictions", str(tmp_path / "p.json"),
                 "--answer-key", str(data / "answers.json")]) == 2
    assert "record q0003" in capsys.readouterr().err


def test_bad_questions_file_names_record_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_dataset(tmp_path, items=3)
    questions = json.loads((tmp_path / "questions.json").read_text())
    questions[1]["choices"] = "not a list"
    (tmp_path / "questions.json").write_text(json.dumps(questions))
    assert main(["eval", "example-colors", "--model", "random", "--data", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "questions.json" in err and "record 1" in err and "field 'choices'" in err
    assert not (tmp_path / "o").exists()
