from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct import AbductError, Settings
from abduct.host import build_registry
from abduct_plugin_example.data import write_dataset
from abduct_plugin_example.model import MeanColorModel
from abduct_testing import GeneratorContract, ScorerContract, TaskContract, main


class TestScorer(ScorerContract):
    def make_scorer(self) -> object:
        return MeanColorModel()


class TestGenerator(GeneratorContract):
    def make_generator(self) -> object:
        return MeanColorModel()


class TestColorsTask(TaskContract):
    task_name = "example-colors"

    def make_data(self, tmp_path: Path) -> Path:
        write_dataset(tmp_path, items=20)
        return tmp_path


class TestDescribeTask(TaskContract):
    task_name = "example-describe"

    def make_data(self, tmp_path: Path) -> Path:
        write_dataset(tmp_path, items=20)
        return tmp_path


def test_installed_plugin_is_discovered(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "--json"]) == 0
    assert {"example-colors", "example-describe"} <= {t["name"] for t in json.loads(capsys.readouterr().out)}
    assert main(["models", "--json"]) == 0
    assert "example-color" in {m["name"] for m in json.loads(capsys.readouterr().out)}
    info = next(p for p in build_registry().plugins if p.name == "example")
    assert info.error is None


def test_factory_options_are_typed_and_checked() -> None:
    registry = build_registry()
    model = registry.create("model", "example-color,crop=0.5", Settings())
    assert isinstance(model, MeanColorModel) and model.crop == 0.5
    assert registry.create("model", "example-color", Settings()).fingerprint != model.fingerprint
    with pytest.raises(AbductError, match="crop must be in"):
        registry.create("model", "example-color,crop=2")
    with pytest.raises(AbductError, match="no option 'size'.*valid: crop=1.0"):
        registry.create("model", "example-color,size=3")


def test_generates_the_colour_it_sees(tmp_path: Path) -> None:
    from abduct import Decoding, GenerationRequest, VisualInput

    write_dataset(tmp_path, items=8)
    names = json.loads((tmp_path / "colors.json").read_text())
    questions = json.loads((tmp_path / "questions.json").read_text())
    requests = [GenerationRequest(VisualInput(str(tmp_path / q["image"]))) for q in questions]
    assert MeanColorModel().generate(requests, Decoding(), None) == [names[q["id"]] for q in questions]


def test_make_data_eval_and_score_through_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, out = tmp_path / "data", tmp_path / "out"
    assert main(["example", "make-data", "--out", str(data), "--items", "24"]) == 0
    assert main(["eval", "example-colors", "--model", "example-color", "--data", str(data),
                 "--out", str(out), "--quiet", "--no-cache"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["metrics"] == {"accuracy": 100.0, "n": 24}
    assert results["model"]["abilities"] == ["score", "generate"]
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


def test_describe_generation_through_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    assert main(["example", "make-data", "--out", str(data), "--items", "200"]) == 0
    assert main(["eval", "example-describe", "--model", "example-color", "--data", str(data),
                 "--out", str(tmp_path / "gen"), "--quiet", "--no-cache"]) == 0
    results = json.loads((tmp_path / "gen" / "results.json").read_text())
    assert results["metrics"] == {"exact_match": 100.0, "n": 200}
    assert main(["eval", "example-describe", "--model", "random", "--data", str(data),
                 "--out", str(tmp_path / "rnd"), "--quiet", "--no-cache"]) == 0
    chance = json.loads((tmp_path / "rnd" / "results.json").read_text())["metrics"]["exact_match"]
    assert 15 < chance < 35  # 1 in 4 colour names

    records = [json.loads(line) for line in (tmp_path / "gen" / "predictions.jsonl").read_text().splitlines()]
    (tmp_path / "p.json").write_text(json.dumps({r["id"]: r["prediction"] for r in records}))
    capsys.readouterr()
    assert main(["score", "example-describe", "--predictions", str(tmp_path / "p.json"),
                 "--answer-key", str(data / "colors.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"exact_match": 100.0}
    (tmp_path / "p.json").write_text(json.dumps({r["id"]: r["prediction"] for r in records[1:]}))
    assert main(["score", "example-describe", "--predictions", str(tmp_path / "p.json"),
                 "--answer-key", str(data / "colors.json")]) == 2
    assert f"record {records[0]['id']}" in capsys.readouterr().err


def test_a_scoring_only_model_is_refused_by_the_generation_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_dataset(tmp_path, items=3)
    assert main(["eval", "example-describe", "--model", "constant", "--data", str(tmp_path),
                 "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "does not generate" in capsys.readouterr().err


def test_bad_questions_file_names_record_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_dataset(tmp_path, items=3)
    questions = json.loads((tmp_path / "questions.json").read_text())
    questions[1]["choices"] = "not a list"
    (tmp_path / "questions.json").write_text(json.dumps(questions))
    assert main(["eval", "example-colors", "--model", "random", "--data", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "questions.json" in err and "record 1" in err and "field 'choices'" in err
    assert not (tmp_path / "o").exists()


def test_the_dataset_option_changes_what_the_task_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--dataset example-colors,questions=FILE``: another questions file in the folder is what
    the run reads, evaluates and hashes; an option the dataset lacks, or another task's
    dataset, is one line."""
    data = tmp_path / "data"
    write_dataset(data, items=12)
    questions = json.loads((data / "questions.json").read_text())
    (data / "first.json").write_text(json.dumps(questions[:5]))
    argv = ["eval", "example-colors", "--model", "random", "--data", str(data), "--quiet", "--no-cache"]
    assert main([*argv, "--out", str(tmp_path / "all")]) == 0
    assert main([*argv, "--out", str(tmp_path / "first"), "--dataset", "example-colors,questions=first.json"]) == 0
    every, first = (json.loads((tmp_path / run / "results.json").read_text()) for run in ("all", "first"))
    assert every["metrics"]["n"] == 12 and first["metrics"]["n"] == 5
    assert set(every["data"]["files"]) == {"questions.json", "answers.json"}
    assert set(first["data"]["files"]) == {"first.json", "answers.json"}
    ids = [json.loads(line)["id"] for line in (tmp_path / "first" / "predictions.jsonl").read_text().splitlines()]
    assert ids == [q["id"] for q in questions[:5]]
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "x"), "--dataset", "example-colors,question=first.json"]) == 2
    assert "no option 'question'; did you mean 'questions'?" in capsys.readouterr().err
    assert main([*argv, "--out", str(tmp_path / "y"), "--dataset", "example-describe,questions=first.json"]) == 2
    assert "reads dataset 'example-colors', not 'example-describe'" in capsys.readouterr().err


def test_check_and_the_sample_view(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``abduct check`` runs the task's dataset check; samples.html shows each picture with its
    scored choices (the task's ``view``), and no record falls back to the generic view."""
    data = tmp_path / "data"
    write_dataset(data, items=6)
    assert main(["check", "example-describe", "--data", str(data)]) == 0
    names = json.loads((data / "colors.json").read_text())
    del names["q0004"]
    (data / "colors.json").write_text(json.dumps(names))
    capsys.readouterr()
    assert main(["check", "example-describe", "--data", str(data)]) == 1
    assert "colors.json, record q0004: question has no colour name" in capsys.readouterr().out
    assert main(["check", "example-colors", "--data", str(data)]) == 0  # its key is answers.json

    assert main(["eval", "example-colors", "--model", "example-color", "--data", str(data), "--out",
                 str(tmp_path / "o"), "--quiet", "--no-cache"]) == 0
    page = (tmp_path / "o" / "samples.html").read_text()
    assert "choice 1 \\u00b7 score" in page and "sample view failed" not in page  # JSON inside the page
    assert len(list((tmp_path / "o" / "samples").iterdir())) == 6
