"""The shared shapes (argmax, strictly higher) and the JSON reader at the ends of the float
range: scaled scores decide exactly as the unscaled ones, and numbers no float holds are
refused or read as infinite for the caller to name."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from abduct import AbductError, DataError
from abduct.kit import read_json
from abduct.kit.shapes import first_argmax, strictly_higher
from abduct_testing import EXTREME_SCALES


def _integer_scores(rows: int, width: int) -> np.ndarray:
    return np.random.default_rng(0).integers(-3, 4, size=(rows, width)).astype(np.float64)


@pytest.mark.parametrize("scale", EXTREME_SCALES)
def test_first_argmax_and_strictly_higher_ignore_a_positive_scale(scale: float) -> None:
    base = _integer_scores(400, 4)
    scaled = base * scale
    assert np.all(np.isfinite(scaled)) and np.all((scaled == 0) == (base == 0))  # no overflow, no underflow
    choices = [first_argmax(row) for row in base]
    # ties and both signs are there, so the check is not trivial
    assert any(len(set(row.tolist())) < 4 for row in base) and (base < 0).any() and (base > 0).any()
    assert choices == [next(k for k, v in enumerate(row) if v == max(row)) for row in base.tolist()]
    assert [first_argmax(row) for row in scaled] == choices
    assert [first_argmax(row.tolist()) for row in scaled] == choices  # a list goes through the same path
    for gold in (0, 1):
        wins = [strictly_higher(row[:2].tolist(), gold) for row in base]
        assert [strictly_higher(row[:2].tolist(), gold) for row in scaled] == wins
        assert 0 < sum(wins) < len(wins)


def test_subnormal_neighbours_stay_ordered() -> None:
    tiny = 5e-324  # the smallest positive float: k * tiny is exact for small k
    assert first_argmax([tiny, 2 * tiny, -tiny]) == 1
    assert first_argmax([-0.0, 0.0, -tiny]) == 0  # -0.0 == 0.0: a tie, the first wins
    assert strictly_higher([tiny, 0.0], 0) and not strictly_higher([0.0, -0.0], 0)
    assert strictly_higher([-1e300, -1.7976931348623157e308], 0)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "numbers.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize("literal", ["1e400", "-1e400", "9" * 400, "-" + "9" * 400, "9" * 5000])
def test_numbers_beyond_the_float_range(tmp_path: Path, literal: str) -> None:
    path = _write(tmp_path, f'{{"a": [1, {literal}]}}')
    with pytest.raises(DataError) as err:
        read_json(path)
    message = str(err.value)
    assert str(path) in message and "beyond the range of a 64-bit float" in message and "\n" not in message
    assert len(message) < 300  # a 5000-digit number is not echoed whole
    value = read_json(path, allow_non_finite=True)["a"][1]
    assert value == (-np.inf if literal.startswith("-") else np.inf)


def test_large_numbers_inside_the_range_are_read_exactly(tmp_path: Path) -> None:
    big = 2**1000
    data = read_json(_write(tmp_path, json.dumps({"i": big, "f": 1e308, "s": 5e-324, "n": -(2**1023)})))
    assert data["i"] == big and isinstance(data["i"], int)
    assert data["f"] == 1e308 and data["s"] == 5e-324 and data["n"] == -(2**1023)
    near = int(np.finfo(np.float64).max)  # the largest float as an integer still fits
    assert read_json(_write(tmp_path, str(near))) == near


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_model_returning_a_non_finite_score_is_refused_naming_it(bad: float) -> None:
    from abduct import VisualInput
    from abduct_testing import ScoringEngine

    class Broken:
        accepts = frozenset({"context"})

        def score(self, visuals: object, texts: list[str]) -> np.ndarray:
            scores = np.arange(len(texts), dtype=np.float64)
            scores[-1] = bad
            return scores

    engine = ScoringEngine(Broken())
    with pytest.raises(AbductError, match=r"model 'Broken' returned 1 non-finite value\(s\)"):
        engine.score_pairs([VisualInput(None, context="c")] * 3, ["a", "b", "c"])
