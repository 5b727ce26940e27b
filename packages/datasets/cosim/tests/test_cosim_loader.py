"""The loader: ids are indices, texts kept exactly, errors name file, record and field; the
real files read without a warning; the check command."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from abduct import DataError
from abduct_cosim import SEP, load_file, load_split
from abduct_cosim.breakdown import count_sentences, is_yes_no, sentence_bucket
from abduct_testing import main
from conftest import record, write_json


def test_ids_are_indices_text_kept_exactly_and_image_path(tmp_path: Path) -> None:
    raw = [record(question="Is it  wet ?", change="Add rain .  ", answer_orig="No. "), record(label=3)]
    file = write_json(tmp_path / "val.json", raw)
    records = load_file(file)
    assert [r.id for r in records] == ["0", "1"]
    assert records[0].question == "Is it  wet ?" and records[0].change == "Add rain .  "
    assert records[0].image_path == str(tmp_path / "images" / "genome_1" / "1.jpg")
    assert records[0].context() == "Is it  wet ?" + SEP + "No. " + SEP + "Add rain .  "
    assert records[0].context("question_change") == "Is it  wet ?" + SEP + "Add rain .  "
    assert records[0].context("none") is None
    assert records[1].label == 3
    assert load_split(tmp_path, "val", image_root=Path("/x"))[0].image_path == "/x/genome_1/1.jpg"


@pytest.mark.parametrize("change, field, words", [
    ({"answer_choices": ["a", "b", "c"]}, "answer_choices", "4 strings"),
    ({"answer_choices": ["a", "b", 3, "d"]}, "answer_choices[2]", "string"),
    ({"answer_label": 4}, "answer_label", "0-3"),
    ({"answer_label": True}, "answer_label", "0-3"),
    ({"answer_label": "1"}, "answer_label", "0-3"),
    ({"question": None}, "question", "string"),
    ({"img_fn": ""}, "img_fn", "empty"),
    ({"folder": "../x"}, "folder", "plain name"),
])
def test_errors_name_file_record_and_field(tmp_path: Path, change: dict[str, object], field: str, words: str) -> None:
    file = write_json(tmp_path / "val.json", [record(), record(**change)])  # type: ignore[arg-type]
    with pytest.raises(DataError) as err:
        load_file(file)
    message = str(err.value)
    assert str(file) in message and "record 1" in message and f"field '{field}'" in message and words in message


def test_missing_field_and_bad_top_level(tmp_path: Path) -> None:
    raw = record()
    del raw["change"]
    with pytest.raises(DataError, match=r"record 0, field 'change': missing"):
        load_file(write_json(tmp_path / "a.json", [raw]))
    with pytest.raises(DataError, match="expected a JSON list"):
        load_file(write_json(tmp_path / "b.json", {"0": raw}))


def test_sentence_counts_and_yes_no() -> None:
    assert count_sentences("Add a dog.") == 1
    assert count_sentences("Add a dog") == 1
    assert count_sentences("Add a dog. Remove the cat! Is it 3.5 m? Yes .") == 4
    assert count_sentences("Add a dog .  ") == 1
    assert count_sentences("") == 1
    assert [sentence_bucket(t) for t in ("A.", "A. B.", "A. B. C.", "A. B. C. D. E.")] == ["1", "2", "3", "4+"]
    assert is_yes_no("Is the man wet?") and is_yes_no("'Are they old?") and is_yes_no("Wouldn't it fall?")
    assert is_yes_no("If it rained, would the road be wet?")
    assert not is_yes_no("What color is it?") and not is_yes_no("Why is he here?")


def test_real_files_load_without_a_warning(real_cosim: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        train, val = load_split(real_cosim, "train"), load_split(real_cosim, "val")
    assert (len(train), len(val)) == (1924, 800)
    assert {r.type for r in train} == {"normal"} and {r.type for r in val} == {"hamlet"}
    raw = json.loads((real_cosim / "val.json").read_text())
    assert [(r.question, r.answer_orig, r.change, list(r.choices)) for r in val] == [
        (x["question"], x["answer_orig"], x["change"], x["answer_choices"]) for x in raw]
    # a distractor with the gold text: 5 val records (1 in train); 6 val records hold some repeated text
    assert [r.index for r in val if r.choices.count(r.choices[r.label]) > 1] == [9, 131, 152, 178, 403]
    assert [r.index for r in val if len(set(r.choices)) < 4] == [9, 131, 152, 178, 403, 408]
    assert [r.index for r in train if r.choices.count(r.choices[r.label]) > 1] == [1873]


def test_check_lists_missing_images(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cosim", "check", "--data", str(corpus)]) == 0
    assert "no problems" in capsys.readouterr().out
    write_json(tmp_path / "val.json", [record(), record(img_fn="2.jpg")])
    assert main(["cosim", "check", "--data", str(tmp_path), "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)
    assert len(problems) == 2 and "record 1: image missing" in problems[1]
    write_json(tmp_path / "val.json", [record(answer_label=9)])
    assert main(["cosim", "check", "--data", str(tmp_path), "--no-images"]) == 1
    assert "record 0, field 'answer_label'" in capsys.readouterr().out
