"""Finding and reading the three repos: the folder layouts, the split files, every field's checks,
the Y/N layouts found on the file, the clips each task needs, and the one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abduct import AbductError, DataError, Settings, Spec
from abduct_blackswan.clips import video_id
from abduct_blackswan.dataset import make_gen_dataset, make_mcq_dataset, make_yn_dataset
from abduct_blackswan.layout import repo_dir, split_file
from abduct_testing import main

CLIPS = {"preevent_file_name": "set1/0_A_preevent.mp4", "event_file_name": "set1/0_B_event.mp4",
         "postevent_file_name": "set1/0_C_postevent.mp4"}


def mcq(q_id: Any = 7, task: str = "Detective", **more: Any) -> dict[str, Any]:
    return {"q_id": q_id, "task": task, "difficulty": "medium", "default_question": "What happened?",
            "mcq_options": ["one.", "two.", "three."], "mcq_gt_option": 1, **CLIPS, **more}


def write(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def load(kind: str, data: Path, split: str = "validation") -> list[Any]:
    make = {"mcq": make_mcq_dataset, "yn": make_yn_dataset, "gen": make_gen_dataset}[kind]
    return make(Spec(f"blackswan-{kind}"), Settings()).load(data, split)


def test_questions_keep_q_id_as_given_keyed_as_text(tmp_path: Path) -> None:
    write(tmp_path / "MCQ" / "BlackSwanSuite_MCQ_Val.jsonl", [mcq(7), mcq("8", "Reporter")])
    first, second = load("mcq", tmp_path)
    assert (first.q_id, first.id, second.q_id, second.id) == (7, "7", "8", "8")
    assert first.options == ("one.", "two.", "three.") and first.label == 1 and first.difficulty == "medium"
    assert first.clips.pre == str((tmp_path / "MCQ" / "set1/0_A_preevent.mp4").absolute())
    assert first.video == second.video == "set1/0"  # the clustering unit: both questions are about one video


@pytest.mark.parametrize("where", ["local-dir", "named", "hub-cache", "hub-cache-in-home", "repo-itself"])
def test_the_repo_folder_is_found_in_each_layout(tmp_path: Path, where: str) -> None:
    cache = "datasets--UBC-ViL--BlackSwanSuite-MCQ"
    folder = {"local-dir": tmp_path / "MCQ", "named": tmp_path / "BlackSwanSuite-MCQ",
              "hub-cache": tmp_path / cache / "snapshots" / "abc123",
              "hub-cache-in-home": tmp_path / "hub" / cache / "snapshots" / "abc123",
              "repo-itself": tmp_path}[where]
    write(folder / "BlackSwanSuite_MCQ_Val.jsonl", [mcq()])
    if where.startswith("hub-cache"):  # a second snapshot: refs/main says which one is current
        write(folder.parent / "older" / "BlackSwanSuite_MCQ_Val.jsonl", [mcq(1)])
        (folder.parent.parent / "refs").mkdir()
        (folder.parent.parent / "refs" / "main").write_text("abc123\n")
    assert repo_dir(tmp_path, "MCQ") == folder
    assert [q.id for q in load("mcq", tmp_path)] == ["7"]


def test_a_missing_repo_is_one_line_with_the_download_command_and_the_gating(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "MCQ" / "BlackSwanSuite_MCQ_Val.jsonl", [mcq()])
    code = main(["eval", "blackswan-yn", "--model", "random", "--data", str(tmp_path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and not (tmp_path / "o").exists()
    assert f"huggingface-cli download UBC-ViL/BlackSwanSuite-YN --repo-type dataset --local-dir {tmp_path / 'YN'}" in err
    assert "accepting the terms" in err and "huggingface-cli login" in err and "HF_TOKEN" in err


def test_test_files_are_found_by_pattern_and_several_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "MCQ"
    write(folder / "BlackSwanSuite_MCQ_Val.jsonl", [mcq()])
    with pytest.raises(AbductError, match="no test file .* not verified"):
        split_file(folder, "MCQ", "test")
    hidden = {k: v for k, v in mcq(3).items() if k != "mcq_gt_option"}
    (folder / "BlackSwanSuite_MCQ_Test_final_with_answers.json").write_text(json.dumps([mcq(3)]))  # a JSON list
    [question] = load("mcq", tmp_path, "test")
    assert question.label == 1  # the organisers' own copy gives its answers: they are kept
    write(folder / "BlackSwanSuite_MCQ_Test.jsonl", [hidden])
    assert split_file(folder, "MCQ", "test").name == "BlackSwanSuite_MCQ_Test.jsonl"  # the exact name first
    (folder / "BlackSwanSuite_MCQ_Test.jsonl").unlink()
    write(folder / "mcq_test_v2.jsonl", [hidden])
    with pytest.raises(AbductError, match="several test files"):
        split_file(folder, "MCQ", "test")
    with pytest.raises(AbductError, match="no split 'val'"):
        split_file(folder, "MCQ", "val")


def test_test_labels_hidden_or_given_but_not_mixed(tmp_path: Path) -> None:
    hidden = [{k: v for k, v in mcq(i).items() if k != "mcq_gt_option"} for i in range(2)]
    write(tmp_path / "MCQ" / "BlackSwanSuite_MCQ_Test.jsonl", [hidden[0], {**hidden[1], "mcq_gt_option": None}])
    assert [q.label for q in load("mcq", tmp_path, "test")] == [None, None]
    write(tmp_path / "MCQ" / "BlackSwanSuite_MCQ_Test.jsonl", [hidden[0], mcq(1)])
    with pytest.raises(DataError, match="line 1, field 'mcq_gt_option': this test file gives some labels"):
        load("mcq", tmp_path, "test")


BAD_MCQ = [
    ({"task": "Forecaster"}, "task", "expected one of Detective, Reporter"),
    ({"difficulty": "trivial"}, "difficulty", "expected one of easy, medium, hard"),
    ({"mcq_options": ["one", "two"]}, "mcq_options", "three non-empty strings"),
    ({"mcq_options": ["one", "", "three"]}, "mcq_options", "three non-empty strings"),
    ({"mcq_gt_option": 3}, "mcq_gt_option", "expected 0, 1 or 2"),
    ({"mcq_gt_option": True}, "mcq_gt_option", "expected 0, 1 or 2"),
    ({"mcq_gt_option": 1.0}, "mcq_gt_option", "expected 0, 1 or 2"),
    ({"q_id": None}, "q_id", "an integer or a non-empty string"),
    ({"default_question": ""}, "default_question", "non-empty string"),
    ({"postevent_file_name": ""}, None, "Detective question needs its pre- and post-event clips"),
    ({"preevent_file_name": 3}, "preevent_file_name", "expected a relative path"),
    ({"lateral_file_name": "x.mp4"}, "lateral_file_name", "clip field of unknown role"),
    ({"pre_clip_file_name": "x.mp4"}, "pre_clip_file_name", "two clip fields for the pre clip"),
]


@pytest.mark.parametrize("change, field, message", BAD_MCQ)
def test_a_bad_mcq_record_names_the_file_line_and_field(tmp_path: Path, change: dict[str, Any], field: str | None,
                                                         message: str) -> None:
    file = write(tmp_path / "MCQ" / "BlackSwanSuite_MCQ_Val.jsonl", [mcq(1), {**mcq(2), **change}])
    with pytest.raises(DataError) as caught:
        load("mcq", tmp_path)
    assert str(caught.value).startswith(f"{file}, record line 2" + (f", field '{field}'" if field else ""))
    assert message in str(caught.value)


@pytest.mark.parametrize("field", ["q_id", "task", "difficulty", "default_question", "mcq_options", "mcq_gt_option"])
def test_a_missing_field_is_named_with_the_fields_found(tmp_path: Path, field: str) -> None:
    record = {k: v for k, v in mcq().items() if k != field}
    file = write(tmp_path / "MCQ" / "BlackSwanSuite_MCQ_Val.jsonl", [record])
    with pytest.raises(DataError, match=f"^{file}, record line 1, field '{field}': missing \\(fields found: "):
        load("mcq", tmp_path)


def test_broken_lines_repeated_ids_and_empty_files(tmp_path: Path) -> None:
    file = tmp_path / "MCQ" / "BlackSwanSuite_MCQ_Val.jsonl"
    write(file, [mcq(1)])
    file.write_text(file.read_text() + "\n{not json\n")
    with pytest.raises(DataError, match="record line 3: not valid JSON"):
        load("mcq", tmp_path)
    write(file, [mcq(1), mcq(2), mcq("1")])
    with pytest.raises(DataError, match="record line 3, field 'q_id': question id '1' repeats \\(line 1\\)"):
        load("mcq", tmp_path)
    file.write_text("\n")
    with pytest.raises(DataError, match="no questions"):
        load("mcq", tmp_path)


def yn(**fields: Any) -> dict[str, Any]:
    return {**CLIPS, **fields}


YN_LAYOUTS = [  # (the fields of a Detective question, those of a Reporter question)
    ({"def_id": "3", "exp": "It rained.", "def_task": 1, "def_label": "yes"},  # the construction code's names
     {"def_id": "4", "exp": "It snowed.", "def_task": 2, "def_label": "no"}),
    ({"q_id": 3, "hypothesis": "It rained.", "task": "Detective", "label": "Yes"},
     {"q_id": 4, "hypothesis": "It snowed.", "task": "Reporter", "label": "NO"}),
    ({"id": "3", "statement": "It rained.", "task": "detective", "answer": True},
     {"id": "4", "statement": "It snowed.", "task": "REPORTER", "answer": False}),
    ({"q_id": "3", "hyp": "It rained.", "def_task": "1", "gt_answer": "yes", "default_question": "Still possible?"},
     {"q_id": "4", "hyp": "It snowed.", "def_task": "2", "gt_answer": "no", "default_question": "Still valid?"}),
]


@pytest.mark.parametrize("detective, reporter", YN_LAYOUTS)
def test_yn_fields_are_found_on_the_file(tmp_path: Path, detective: dict[str, Any], reporter: dict[str, Any]) -> None:
    write(tmp_path / "YN" / "BlackSwanSuite_YN_Val.jsonl", [yn(**detective), yn(**reporter)])
    first, second = load("yn", tmp_path)
    assert (first.id, first.task, first.hypothesis, first.label) == ("3", "Detective", "It rained.", True)
    assert (second.id, second.task, second.hypothesis, second.label) == ("4", "Reporter", "It snowed.", False)
    assert first.question == detective.get("default_question")
    assert assert_layout(first.layout.describe(), detective)


def assert_layout(found: dict[str, str], fields: dict[str, Any]) -> bool:
    """The layout names exactly the file's fields, the hypothesis among its candidates."""
    return set(found.values()) == set(fields) and found["hypothesis"] in ("exp", "hypothesis", "statement", "hyp")


def test_an_unknown_yn_layout_is_refused_naming_the_fields_found(tmp_path: Path) -> None:
    file = write(tmp_path / "YN" / "BlackSwanSuite_YN_Val.jsonl",
                 [yn(uid=1, claim="It rained.", kind="Detective", verdict="yes")])
    with pytest.raises(DataError) as caught:
        load("yn", tmp_path)
    line = str(caught.value)
    assert line.startswith(f"{file}: unknown Y/N layout: fields found ") and "uid, claim, kind, verdict" in line
    assert "hypothesis: one of hypothesis, exp, hyp, statement" in line and "\n" not in line
    write(file, [yn(q_id=1, exp="a", hypothesis="b", task=1, label="yes")])
    with pytest.raises(DataError, match="ambiguous Y/N layout: fields hypothesis and exp"):
        load("yn", tmp_path)
    write(file, [yn(q_id=1, exp="a", task=3, label="yes")])
    with pytest.raises(DataError, match="field 'task': expected Detective or Reporter \\(or 1 / 2\\), got 3"):
        load("yn", tmp_path)
    write(file, [yn(q_id=1, exp="a", task=1, label="maybe")])
    with pytest.raises(DataError, match="field 'label': expected yes or no, got 'maybe'"):
        load("yn", tmp_path)
    write(file, [yn(q_id=1, exp="a", task=1)])  # validation needs the label
    with pytest.raises(DataError, match="label: one of def_label"):
        load("yn", tmp_path)


def test_each_task_gets_the_clips_it_shows_or_one_line(tmp_path: Path) -> None:
    whole = {"preevent_file_name": "", "postevent_file_name": "", "video_path": "set1_merged/0_E_merged.mp4"}
    write(tmp_path / "YN" / "BlackSwanSuite_YN_Val.jsonl", [{"q_id": 1, "exp": "a", "task": 2, "label": "no", **whole}])
    [reporter] = load("yn", tmp_path)
    assert reporter.clips.whole is not None and reporter.clips.pre is None and reporter.video == "set1/0"
    # a whole video is not enough for a Detective: whether its middle is blacked out is not verified
    file = write(tmp_path / "YN" / "BlackSwanSuite_YN_Val.jsonl", [{"q_id": 1, "exp": "a", "task": 1, "label": "no",
                                                                  **whole}])
    with pytest.raises(DataError, match=f"^{file}, record line 1: a Detective question needs its pre- and "
                                        "post-event clips.*clip fields given: video_path"):
        load("yn", tmp_path)
    forecaster = {"q_id": 1, "task": "Forecaster", "gt_ref_ans": ["x"], "preevent_file_name": "a.mp4",
                  "postevent_file_name": ""}
    reporter_pre_post = {"q_id": 2, "task": "Reporter", "gt_ref_ans": ["y"], "preevent_file_name": "a.mp4",
                         "postevent_file_name": "b.mp4"}
    file = write(tmp_path / "Gen" / "BlackSwanSuite_Gen_Val.jsonl", [forecaster, reporter_pre_post])
    with pytest.raises(DataError, match="line 2: a Reporter question needs the whole video"):
        load("gen", tmp_path)
    write(file, [forecaster])
    [question] = load("gen", tmp_path)
    assert question.references == ("x",) and question.clips.post is None and question.task == "Forecaster"


@pytest.mark.parametrize("path, video", [
    ("oops_val_v1/12_A_preevent.mp4", "oops_val_v1/12"), ("oops_val_v1/12_C_postevent.mp4", "oops_val_v1/12"),
    ("oops_val_v1_merged/12_E_merged.mp4", "oops_val_v1/12"), ("videos/clip-34.mp4", "videos/clip-34"),
])
def test_the_video_of_a_clip(path: str, video: str) -> None:
    assert video_id(path) == video


def test_the_synthetic_corpus_reads_clean_with_its_quirks(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["blackswan", "check", "--data", str(corpus)]) == 0
    mcq_questions, yn_questions = load("mcq", corpus), load("yn", corpus)
    videos = {q.video for q in yn_questions}
    per_video = {v: sum(q.video == v for q in mcq_questions) for v in videos}
    assert 0 in per_video.values() and max(per_video.values()) >= 9  # videos without MCQ, and nine on one video
    assert {q.difficulty for q in mcq_questions} == {"easy", "medium", "hard"}
    assert all(q.label is None for q in load("mcq", corpus, "test")) and all(
        q.label is None for q in load("yn", corpus, "test"))
    assert {q.task for q in load("gen", corpus)} == {"Forecaster", "Detective", "Reporter"}
    post = Path(str(mcq_questions[0].clips.post))
    post.rename(corpus / "moved.mp4")
    try:
        capsys.readouterr()
        assert main(["check", "blackswan-mcq", "--data", str(corpus)]) == 1
        assert f"clip {post} not found" in capsys.readouterr().out
    finally:
        (corpus / "moved.mp4").rename(post)
