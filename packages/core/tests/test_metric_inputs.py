"""The shared input validation (``abduct metric``, abduct-metrics', is tested there: exit 2, first id named)."""

from __future__ import annotations

import pytest

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

