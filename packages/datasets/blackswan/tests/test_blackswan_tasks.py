"""The two tasks through the runner: the contract with random; what each task shows the model; the
colour probe against random and the text-only row; pooled accuracy and unparsed answers computed
by hand; scoring and generating models; the units clustered by video."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct import Decoding, GenerationRequest, RunInfo, TextPool, VisualInput
from abduct.host import EvalConfig, build_registry, run_evaluation
from abduct_blackswan.scoring import Answer, metrics, units
from abduct_blackswan.synth import synthesize
from abduct_blackswan.tasks import McqTask, YnTask
from abduct_testing import TaskContract, registry_with_models


class TestMcqContract(TaskContract):
    task_name = "blackswan-mcq"

    def make_data(self, tmp_path: Path) -> Path:
        synthesize(tmp_path, videos=6, seed=2)  # 26 questions: two units of 16
        return tmp_path


class TestYnContract(TaskContract):
    task_name = "blackswan-yn"

    def make_data(self, tmp_path: Path) -> Path:
        synthesize(tmp_path, videos=6, seed=2)  # 24 questions
        return tmp_path


def _eval(task: str, model: str, data: Path, out: Path, registry: Any = None, **more: Any) -> dict[str, Any]:
    config = EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True, use_cache=False, **more)
    return run_evaluation(config, registry or build_registry())


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def _run_info(split: str = "validation") -> RunInfo:
    return RunInfo(split=split, model_name="m", scores=True, generates=False, judged=False, metric=lambda *a, **k: None)


def test_each_task_shows_the_clips_it_should(corpus: Path) -> None:
    """Detective: the pre-event clip with the post-event clip, never the event; Reporter: the whole
    video, or the three clips; setup=text: no media at all."""
    from abduct.host import get_registry

    for task in (McqTask("video", "score"), YnTask("video", "score")):
        questions = get_registry().create("dataset", task.dataset).load(corpus, "validation")  # type: ignore[arg-type]
        [stage] = task.plan(questions, _run_info())
        for question, item in zip(questions, stage.request.items):  # type: ignore[union-attr]
            visual: VisualInput = item.visual
            media = [visual.media, *(r.media for r in visual.related)]
            assert visual.kind == "video" and not visual.spans  # each clip read whole
            if question.task == "Detective":
                assert media == [question.clips.pre, question.clips.post]
                assert "hidden" in str(visual.context) and not any("_B_event" in str(m) for m in media)
            elif question.clips.whole is not None:
                assert media == [question.clips.whole]
            else:
                assert media == [question.clips.pre, question.clips.event, question.clips.post]
        [blind] = type(task)("text", "score").plan(questions, _run_info())
        assert all(item.visual.features() == {"context"} for item in blind.request.items)  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def probe_runs(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The colour probe on both tasks, with and without the video: one run each for the module."""
    runs = {}
    for task in ("blackswan-mcq", "blackswan-yn", "blackswan-mcq,setup=text", "blackswan-yn,setup=text"):
        runs[task] = tmp_path_factory.mktemp("probe")
        _eval(task, "blackswan-colour", corpus, runs[task])
    return runs


def _metrics(run: Path) -> dict[str, Any]:
    return dict(json.loads((run / "results.json").read_text())["metrics"])


@pytest.mark.parametrize("task, chance", [("blackswan-mcq", 100 / 3), ("blackswan-yn", 50.0)])
def test_the_probe_beats_chance_and_the_text_only_row(probe_runs: dict[str, Path], task: str, chance: float) -> None:
    probe, blind = _metrics(probe_runs[task]), _metrics(probe_runs[f"{task},setup=text"])
    assert probe["accuracy"] >= chance + 30 and probe["reporter_accuracy"] == 100.0
    assert probe["accuracy"] > blind["accuracy"] + 20 and blind["accuracy"] < chance + 15
    # the colour shows only in the event on hard videos: a Detective, who never sees it, is near chance there
    hard = [r for r in _records(probe_runs[task]) if r["difficulty"] == "hard"]
    assert np.mean([r["correct"] for r in hard if r["task"] == "Detective"]) < 0.75
    assert all(r["correct"] for r in hard if r["task"] == "Reporter")
    # without the video every option scores 0: all ties, the first option
    assert {r["answer"] for r in _records(probe_runs[f"{task},setup=text"])} == {0 if task == "blackswan-mcq" else "yes"}


def _write_mcq(data: Path) -> None:
    clips = {"preevent_file_name": "a.mp4", "event_file_name": "b.mp4", "postevent_file_name": "c.mp4"}
    rows = [("Detective", "easy", 0), ("Detective", "hard", 1), ("Detective", "hard", 2), ("Reporter", "easy", 1)]
    folder = data / "MCQ"
    folder.mkdir(parents=True)
    (folder / "BlackSwanSuite_MCQ_Val.jsonl").write_text("".join(json.dumps({
        "q_id": 10 + i, "task": task, "difficulty": level, "default_question": f"Question {i}?",
        "mcq_options": [f"option {i}{k}." for k in "abc"], "mcq_gt_option": gold, **clips}) + "\n"
        for i, (task, level, gold) in enumerate(rows)))


class Scripted:
    """Answers each question with the text ``ANSWERS`` gives it (found by its question text)."""

    accepts = frozenset({"context", "video", "related"})
    fingerprint = "scripted-v1"
    answers = {"Question 0?": "A", "Question 1?": "Answer: (C)", "Question 2?": "I have no idea",
               "Question 3?": "B. option 3b."}

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        return [next(v for k, v in self.answers.items() if k in str(r.prompt)) for r in requests]


class Longest:
    """Scores a text by its length: the scoring path."""

    accepts = frozenset({"context", "video", "related"})
    fingerprint = "longest-v1"

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.array([len(t) for t in texts], dtype=np.float64)


def test_pooled_accuracy_and_unparsed_answers_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Detective 1 right of 3 (one answer unreadable), Reporter 1 of 1: pooled 2/4 = 50, not the
    mean of the two tasks (66.7); the unreadable one is wrong, counted, and -1 in challenge.json,
    and `abduct score` on that file gives the run's numbers."""
    from abduct_testing import main

    _write_mcq(tmp_path / "data")
    registry = registry_with_models("blackswan-test", {"scripted": ("scripted answers", Scripted)})
    results = _eval("blackswan-mcq,setup=text", "scripted", tmp_path / "data", tmp_path / "run", registry)
    found = results["metrics"]
    assert found["accuracy"] == 50.0 and found["accuracy"] != (found["detective_accuracy"] + 100.0) / 2
    assert found["detective_accuracy"] == pytest.approx(100 / 3) and found["reporter_accuracy"] == 100.0
    assert found["unparsed"] == 1 and (found["n"], found["n_detective"], found["n_reporter"]) == (4, 3, 1)
    assert found["unparsed_rate"] == 25.0 and found["unparsed_reasons"] == {"no option found": 1}
    assert found["by_difficulty"] == {"easy": {"accuracy": 100.0, "n": 2}, "hard": {"accuracy": 0.0, "n": 2}}
    assert json.loads((tmp_path / "run" / "challenge.json").read_text()) == {"10": 0, "11": 2, "12": -1, "13": 1}
    assert [(r["answer"], r["parsed"], r["correct"]) for r in _records(tmp_path / "run")] == [
        (0, True, True), (2, True, False), (-1, False, False), (1, True, True)]
    capsys.readouterr()
    assert main(["score", "blackswan-mcq", "--predictions", str(tmp_path / "run" / "challenge.json"),
                 "--answer-key", str(tmp_path / "data" / "MCQ" / "BlackSwanSuite_MCQ_Val.jsonl"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == found


def test_a_scoring_model_chooses_by_its_scores(tmp_path: Path) -> None:
    _write_mcq(tmp_path / "data")
    registry = registry_with_models("blackswan-test", {"longest": ("longest text", Longest)})
    results = _eval("blackswan-mcq,setup=text", "longest", tmp_path / "data", tmp_path / "run", registry)
    records = _records(tmp_path / "run")
    # equal lengths: ties go to the first option, as the core's Choose does
    assert [r["answer"] for r in records] == [0, 0, 0, 0] and all(len(r["scores"]) == 3 for r in records)
    assert results["metrics"]["accuracy"] == 25.0 and results["details"]["answered_by"] == "scores"


def test_hand_computed_metrics_and_their_units() -> None:
    answers = [Answer("1", "Detective", "v1", "easy", True), Answer("2", "Detective", "v1", "easy", False, "empty"),
               Answer("3", "Detective", "v2", "hard", False), Answer("4", "Reporter", "v2", "hard", True),
               Answer("5", "Reporter", "v3", "medium", True)]
    found = metrics(answers)
    assert found["accuracy"] == 60.0  # 3 of 5; the mean of Detective 33.3 and Reporter 100 would be 66.7
    assert found["detective_accuracy"] == pytest.approx(100 / 3) and found["reporter_accuracy"] == 100.0
    assert found["unparsed"] == 1 and found["by_difficulty"]["hard"] == {"accuracy": 50.0, "n": 2}
    assert found["unparsed_rate"] == 20.0 and found["unparsed_reasons"] == {"empty": 1}
    declared = units(answers)
    assert declared["accuracy"].clusters == ("v1", "v1", "v2", "v2", "v3") and declared["accuracy"].cluster == "video"
    assert declared["reporter_accuracy"].ids == ("4", "5")
    assert declared["by_difficulty.easy.accuracy"].values == (1.0, 0.0)
    hidden = metrics([Answer("1", "Detective", "v1", None, None)])
    assert hidden == {"n": 1, "n_detective": 1, "n_reporter": 0, "unparsed": 0, "unparsed_rate": 0.0} and units([]) == {}


def test_yn_records_the_layout_it_read_and_the_test_split_gives_counts(corpus: Path, tmp_path: Path) -> None:
    results = _eval("blackswan-yn", "random", corpus, tmp_path / "yn")
    assert results["inputs"]["ignored"] == ["context"] and results["details"]["answered_by"] == "generation"
    assert {r["parsed"] for r in _records(tmp_path / "yn")} == {True}  # random picks yes or no
    assert results["details"]["fields"] == {"id": "def_id", "hypothesis": "exp", "task": "def_task",
                                            "label": "def_label", "difficulty": "difficulty"}
    assert {r["label"] for r in _records(tmp_path / "yn")} == {"yes", "no"}
    test = _eval("blackswan-mcq", "random", corpus, tmp_path / "test", split="test")
    assert "accuracy" not in test["metrics"] and test["metrics"]["n"] > 0 and "hidden" in test["details"]["labels"]
    assert set(json.loads((tmp_path / "test" / "challenge.json").read_text())) == {
        r["id"] for r in _records(tmp_path / "test")}


def test_the_sample_view_shows_the_question_and_the_options(corpus: Path, probe_runs: dict[str, Path]) -> None:
    from abduct.host import get_registry

    task = McqTask("video", "score")
    questions = {q.id: q for q in get_registry().create("dataset", task.dataset).load(corpus, "validation")}  # type: ignore[arg-type]
    record = _records(probe_runs["blackswan-mcq"])[0]
    view = task.view(record, questions)
    assert view is not None and view["texts"][0]["text"] == questions[record["id"]].question
    assert [t["text"] for t in view["texts"][1:4]] == list(questions[record["id"]].options)
    assert "gold" in view["texts"][1 + questions[record["id"]].label]["label"]
    assert view["fields"]["video"] == record["video"] and view["category"] == record["task"]


@pytest.mark.parametrize(("task", "named"), [("blackswan-mcq", "blackswan-mcq,setup=text"),
                                              ("blackswan-yn,answer=score", "blackswan-yn,answer=score,setup=text"),
                                              ("blackswan-mcq,setup=video", "blackswan-mcq,setup=text")])
def test_the_refusal_of_the_video_for_a_text_only_model_names_the_text_setup(
        corpus: Path, tmp_path: Path, task: str, named: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The task declares the option that gives its questions without the video (``input_options``);
    blackswan-gen declares the same (its run needs BERTScore weights, so it is checked by its traits)."""
    from abduct.host import task_traits
    from abduct_blackswan.gen_task import GenTask

    assert task_traits(GenTask(), "blackswan-gen").input_options["video"] == "setup=text"
    from abduct._builtins.baselines import RandomModel
    from abduct_testing import main

    monkeypatch.setattr(RandomModel, "accepts", frozenset({"context"}))  # a text-only model
    model = "random"
    capsys.readouterr()
    assert main(["eval", task, "--model", model, "--data", str(corpus), "--out", str(tmp_path / "a"),
                 "--limit", "2", "--quiet", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: model '{model}' cannot take related, video inputs"), err
    assert err.endswith(f"; the task without related, video inputs is {named}\n"), err
    assert main(["eval", named, "--model", model, "--data", str(corpus), "--out", str(tmp_path / "b"),
                 "--limit", "2", "--quiet", "--no-cache"]) == 0
