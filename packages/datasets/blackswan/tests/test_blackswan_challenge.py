"""The challenge's submission file: written from a test run, validated against the test questions
(each kind of problem one line, then one error line, exit 2), and scored on validation exactly
as `abduct eval` scores the same answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct_testing import main


@pytest.fixture(scope="module")
def test_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "test"
    assert main(["eval", "blackswan-mcq", "--model", "random", "--split", "test", "--data", str(corpus),
                 "--out", str(out), "--quiet", "--no-cache"]) == 0
    return out


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    done = capsys.readouterr()
    return code, done.out, done.err


def test_a_test_run_says_where_it_wrote_the_submission_file(corpus: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code, said, _ = _cli(capsys, "eval", "blackswan-mcq", "--model", "random", "--split", "test", "--data", str(corpus),
                         "--out", str(out), "--no-cache")
    assert code == 0
    wrote = [line for line in said.splitlines() if line.startswith("wrote ")]
    assert len(wrote) == 1 and "challenge.json" in wrote[0] and wrote[0].endswith(f" in {out}"), said
    assert json.loads((out / "results.json").read_text())["artifacts"] == ["challenge.json"]


def test_submit_then_validate(test_run: Path, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for source in (test_run, test_run / "predictions.jsonl"):
        out = tmp_path / f"{source.name}.json"
        code, said, _ = _cli(capsys, "blackswan", "submit", str(source), "--out", str(out))
        assert code == 0 and "answers" in said
        submitted = json.loads(out.read_text())
        assert submitted == json.loads((test_run / "challenge.json").read_text())
        assert all(isinstance(k, str) and v in (0, 1, 2) for k, v in submitted.items())
        code, said, _ = _cli(capsys, "blackswan", "validate", str(out), "--data", str(corpus))
        assert code == 0 and f"valid, {len(submitted)} answers" in said


@pytest.mark.parametrize("content, expected", [
    ("[0, 1]", "expected one JSON object {question id: option index}, got list"),
    ("drop", "1 question(s) without an answer: "),
    ("extra", "1 key(s) that are no question id of the split: 9999"),
    ("range", "value(s) out of range (0, 1, 2, or -1 for no answer): "),
    ("bool", "1 value(s) that are not integers: "),
    ("float", "1 value(s) that are not integers: "),
    ("text", "1 value(s) that are not integers: "),
    ('{"0": 1, "0": 2}', "duplicate key"),
    ("{", "JSON"),
])
def test_each_malformed_kind_is_one_line_exit_2(test_run: Path, corpus: Path, tmp_path: Path, content: str,
                                                expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    good = json.loads((test_run / "challenge.json").read_text())
    first = next(iter(good))
    changed = {"drop": {k: v for k, v in good.items() if k != first}, "extra": {**good, "9999": 0},
               "range": {**good, first: 3}, "bool": {**good, first: True}, "float": {**good, first: 1.0},
               "text": {**good, first: "1"}}
    file = tmp_path / "submission.json"
    file.write_text(json.dumps(changed[content]) if content in changed else content)
    code, out, err = _cli(capsys, "blackswan", "validate", str(file), "--data", str(corpus))
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith(f"error: {file}"), err
    assert len(out.strip().splitlines()) <= 1 and expected in out + err  # the problem's line, else the error's


def test_every_problem_of_a_file_is_listed_one_line_each(test_run: Path, corpus: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    good = json.loads((test_run / "challenge.json").read_text())
    ids = list(good)
    bad = {**{k: good[k] for k in ids[2:]}, ids[2]: 5, ids[3]: "B", "x": 0}
    (tmp_path / "s.json").write_text(json.dumps(bad))
    code, out, err = _cli(capsys, "blackswan", "validate", str(tmp_path / "s.json"), "--data", str(corpus))
    lines = out.strip().splitlines()
    assert code == 2 and len(lines) == 4 and "4 kinds of problem" in err and len(err.strip().splitlines()) == 1
    assert ["without an answer" in lines[0], "no question id" in lines[1], "out of range" in lines[2],
            "not integers" in lines[3]] == [True] * 4
    assert f"{ids[0]}, {ids[1]}" in lines[0] and f"{ids[2]}=5" in lines[2] and f'{ids[3]}="B"' in lines[3]


def test_submit_refuses_what_is_not_a_full_test_run(corpus: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    for name, extra in (("val", []), ("limited", ["--split", "test", "--limit", "3"])):
        assert main(["eval", "blackswan-mcq", "--model", "random", "--data", str(corpus), "--out",
                     str(tmp_path / name), "--quiet", "--no-cache", *extra]) == 0
    for name, said in (("val", "validation split; the challenge takes the test split"),
                       ("limited", "limited to 3 questions")):
        code, _, err = _cli(capsys, "blackswan", "submit", str(tmp_path / name), "--out", str(tmp_path / "s.json"))
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "s.json").exists()


@pytest.mark.parametrize("model", ["random", "blackswan-colour"])  # a generating and a scoring model
def test_score_on_a_challenge_file_equals_eval(corpus: Path, tmp_path: Path, model: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "blackswan-mcq", "--model", model, "--data", str(corpus), "--out", str(tmp_path / "run"),
                 "--quiet", "--no-cache"]) == 0
    evaluated = json.loads((tmp_path / "run" / "results.json").read_text())["metrics"]
    submission = str(tmp_path / "run" / "challenge.json")
    for key in (corpus, corpus / "MCQ", corpus / "MCQ" / "BlackSwanSuite_MCQ_Val.jsonl"):
        code, out, _ = _cli(capsys, "score", "blackswan-mcq", "--predictions", submission, "--answer-key", str(key),
                            "--json")
        assert code == 0 and json.loads(out) == evaluated
    code, _, err = _cli(capsys, "score", "blackswan-mcq", "--predictions", submission, "--answer-key",
                        str(corpus / "MCQ" / "BlackSwanSuite_MCQ_Test.jsonl"))
    assert code == 2 and "hides its labels" in err


@pytest.fixture(scope="module")
def validation_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "validation"
    assert main(["eval", "blackswan-mcq", "--model", "random", "--data", str(corpus), "--out", str(out),
                 "--quiet", "--no-cache"]) == 0
    return out


def test_validate_refuses_a_validation_runs_file_as_a_test_submission(
        validation_run: Path, test_run: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the synthetic splits' ids are the same numbers, so only the run folder can tell them apart
    assert set(json.loads((validation_run / "challenge.json").read_text())) == \
        set(json.loads((test_run / "challenge.json").read_text()))
    code, out, err = _cli(capsys, "blackswan", "validate", str(validation_run / "challenge.json"), "--data", str(corpus))
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert "run on the validation split" in err and "--split test" in err
    code, out, _ = _cli(capsys, "blackswan", "validate", str(validation_run / "challenge.json"), "--data", str(corpus),
                        "--split", "validation")
    assert code == 0 and "valid" in out


def test_score_reads_a_runs_own_predictions_jsonl(validation_run: Path, corpus: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    evaluated = json.loads((validation_run / "results.json").read_text())["metrics"]
    code, out, _ = _cli(capsys, "score", "blackswan-mcq", "--predictions", str(validation_run / "predictions.jsonl"),
                        "--answer-key", str(corpus), "--json")
    assert code == 0 and json.loads(out) == evaluated


def test_score_names_the_file_to_give(validation_run: Path, test_run: Path, corpus: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    for name, extra in (("limited", ["--limit", "5"]), ("yn", [])):
        task = "blackswan-yn" if name == "yn" else "blackswan-mcq"
        assert main(["eval", task, "--model", "random", "--data", str(corpus), "--out", str(tmp_path / name),
                     "--quiet", "--no-cache", *extra]) == 0
    cases = [(validation_run, "a folder; give a file: a run's challenge.json"),
             (test_run / "challenge.json", "run on the test split"),
             (test_run / "predictions.jsonl", "run on the test split"),
             (tmp_path / "limited" / "predictions.jsonl", "limited to 5 questions"),
             (tmp_path / "yn" / "predictions.jsonl", "written by a blackswan-yn run")]
    for given, said in cases:
        code, out, err = _cli(capsys, "score", "blackswan-mcq", "--predictions", str(given), "--answer-key", str(corpus))
        assert code == 2 and not out and said in err and len(err.strip().splitlines()) == 1, (given, err)
        assert err.startswith(f"error: {given}")
        assert "challenge.json" in err or "predictions.jsonl" in err
