from __future__ import annotations

import pytest

from abduct.kit.answers import ExactMatch, exact_match, normalize_answer
from abduct_testing import MetricContract


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("The Dog", "dog"),
        ("  a   red\tcar ", "red car"),
        ("Two dogs.", "2 dogs"),
        ("twenty-one", "twentyone"),
        ("an apple, the pear; a plum!", "apple pear plum"),
        ("Don't stop", "dont stop"),
        ("U.S.A.", "usa"),
        ("ten", "10"),
        ("zero", "0"),
        ("ninety nine", "90 9"),
        ("$5 or 10% + 1", "$5 or 10 + 1"),
        ("THEATRE", "theatre"),
        ("café", "café"),
        ("", ""),
        ("the", ""),
    ],
)
def test_normalisation(text: str, normal: str) -> None:
    assert normalize_answer(text) == normal


def test_exact_match_any_reference() -> None:
    assert exact_match("Two", ["three", "2"])
    assert not exact_match("a dog", ["a cat", "dogs"])


class TestExactMatchContract(MetricContract):
    def make_metric(self) -> ExactMatch:
        return ExactMatch()


def test_values() -> None:  # through `abduct metric`: abduct-metrics' test_metric_command.py
    preds = {"a": "The cat.", "b": "three dogs", "c": "a bird"}
    refs = {"a": ["cat"], "b": ["a horse", "3 dogs"], "c": ["bird flying"]}
    result = ExactMatch().compute(preds, refs)
    assert result.per_sample == {"a": {"exact_match": 100.0}, "b": {"exact_match": 100.0}, "c": {"exact_match": 0.0}}
    assert result.corpus["exact_match"] == pytest.approx(200 / 3, abs=1e-12)
