"""The shared input validation, directly and through ``abduct metric`` (exit 2, first id named)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct._cli import main
from abduct.contract.errors import DataError
from abduct.kit.metric_inputs import validate_inputs


def test_valid_inputs_come_back_in_prediction_order() -> None:
    pred, refs, ques = validate_inputs({"b": "x", "a": "y"}, {"a": ["y"], "b": ("x", "z")}, {"a": "q", "b": "r"})
    assert list(pred) == ["b", "a"] and list(refs) == ["b", "a"] and refs["b"] == ["x", "z"]
    assert ques == {"b": "r", "a": "q"}


@pytest.mark.parametrize(
    ("predictions", "references", "questions", "bad_id", "words"),
    [
        ({"a": "x", "b": "y", "c": "z"}, {"a": ["x"], "c": ["z"]}, None, "b", "not in the references"),
        ({"a": "x"}, {"a": ["x"], "zz": ["y"], "yy": ["q"]}, None, "zz", "not in the predictions"),
        ({"a": "x", "b": "y"}, {"a": ["x"], "b": []}, None, "b", "empty reference list"),
        ({"a": "x", "b": 3}, {"a": ["x"], "b": ["y"]}, None, "b", "prediction must be a string"),
        ({"a": "x", "b": "y"}, {"a": ["x"], "b": ["y", None]}, None, "b", "reference 1 must be a string"),
        ({"a": "x", "b": "y"}, {"a": ["x"], "b": "y"}, None, "b", "must be a list"),
        ({"a": "x", "b": "y"}, {"a": ["x"], "b": ["y"]}, {"a": "q"}, "b", "not in the questions"),
        ({"a": "x"}, {"a": ["x"]}, {"a": 1}, "a", "question must be a string"),
    ],
)
def test_first_offending_id_is_named(predictions, references, questions, bad_id, words) -> None:
    with pytest.raises(DataError) as info:
        validate_inputs(predictions, references, questions)
    assert info.value.record == bad_id
    assert words in str(info.value)


def test_not_a_mapping_and_no_predictions() -> None:
    with pytest.raises(DataError, match="JSON object"):
        validate_inputs(["x"], {"a": ["x"]})
    with pytest.raises(DataError, match="no predictions"):
        validate_inputs({}, {})


def _write(tmp_path: Path, name: str, obj: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("predictions", "references", "bad_id"),
    [
        ({"1": "a dog", "2": "a cat", "3": "x"}, {"1": ["a dog"], "3": ["x"], "2x": ["a cat"]}, "2"),
        ({"1": "a dog", "2": "a cat"}, {"1": ["a dog"], "2": []}, "2"),
        ({"1": "a dog", "2": ["a cat"]}, {"1": ["a dog"], "2": ["a cat"]}, "2"),
        ({"1": "a dog"}, {"1": ["a dog"], "9": ["extra"]}, "9"),
    ],
)
@pytest.mark.parametrize("metric", ["exact-match", "bleu"])
def test_cli_bad_input_exits_2_naming_the_id(tmp_path, capsys, predictions, references, bad_id, metric) -> None:
    code = main(["metric", metric, "--predictions", _write(tmp_path, "p.json", predictions),
                 "--references", _write(tmp_path, "r.json", references), "--json"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert f"record {bad_id}" in err and len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_cli_malformed_json_and_unknown_option(tmp_path, capsys) -> None:
    bad = tmp_path / "p.json"
    bad.write_text("{not json", encoding="utf-8")
    refs = _write(tmp_path, "r.json", {"a": ["x"]})
    assert main(["metric", "exact-match", "--predictions", str(bad), "--references", refs]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    preds = _write(tmp_path, "p2.json", {"a": "x"})
    assert main(["metric", "exact-match", "--predictions", preds, "--references", refs, "-o", "colour=red"]) == 2
    assert "no option 'colour'" in capsys.readouterr().err
    assert main(["metric", "exact-macth", "--predictions", preds, "--references", refs]) == 2
    assert "did you mean 'exact-match'" in capsys.readouterr().err
