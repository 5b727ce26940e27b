"""Option values are checked where each option is declared (``Annotated[..., Range(...)]``;
floats finite unless declared ``NonFinite``): one-line errors naming component and option."""

from __future__ import annotations

import math
import re
from typing import Annotated

import pytest

from abduct import AbductError, Decoding, Spec
from abduct._registry.registry import Registry
from abduct.contract import NonFinite, Range
from abduct.host import bind_options
from abduct_testing.fuzzing import declared_violations, run_cli
from abduct_testing.profiles import examples


def _factory(spec: Spec, settings: object, *, beams: Annotated[int, Range(ge=1)] = 1,
             p: Annotated[float, Range(gt=0, le=1)] = 1.0, scale: float = 1.0,
             anything: Annotated[float, NonFinite()] = 0.0, cap: Annotated[int | None, Range(ge=1)] = None) -> None:
    return None


@pytest.mark.parametrize(("key", "value", "needle"), [
    ("beams", "0", "out of range (must be >= 1)"),
    ("beams", "-3", "out of range"),
    ("p", "0", "must be > 0 and <= 1"),
    ("p", "5", "must be > 0 and <= 1"),
    ("p", "nan", "not a finite number"),
    ("scale", "inf", "not a finite number"),
    ("scale", "-inf", "not a finite number"),
    ("scale", "1e400", "not a finite number"),  # overflows to inf when read
    ("cap", "0", "out of range"),
    ("scale", float("nan"), "not a finite number"),  # typed values (from a task) are checked too
])
def test_out_of_range_values_are_one_line_errors(key: str, value: object, needle: str) -> None:
    with pytest.raises(AbductError, match=re.escape(needle)) as caught:
        bind_options("model", "toy", _factory, {key: value})
    assert f"model 'toy' option '{key}'" in str(caught.value) and "\n" not in str(caught.value)


def test_in_range_and_declared_non_finite_values_pass() -> None:
    bound = bind_options("model", "toy", _factory, {"beams": "4", "p": "1", "cap": "none", "anything": "nan"})
    assert bound["beams"] == 4 and bound["p"] == 1.0 and bound["cap"] is None and math.isnan(bound["anything"])


@pytest.mark.parametrize("given", [{"num_beams": 0}, {"max_new_tokens": -1}, {"temperature": 0.0},
                                   {"top_p": 5.0}, {"top_p": float("nan")}])
def test_decoding_refuses_meaningless_values_even_when_built_directly(given: dict[str, float]) -> None:
    with pytest.raises(AbductError, match=f"decoding option '{next(iter(given))}'"):
        Decoding(**given)  # type: ignore[arg-type]


def test_every_declared_constraint_refuses_a_value_outside_it(toy_registry: Registry) -> None:
    """Generated from the declarations: every registered component's ranged option, and Decoding's."""
    violations = list(declared_violations(toy_registry))
    for v in violations:
        with pytest.raises(AbductError, match=f"option '{v.option}'"):
            bind_options(v.kind, v.name, v.factory, {v.option: v.value})
    assert {v.option for v in violations} >= {"num_beams", "max_new_tokens", "temperature", "top_p"}


@pytest.mark.parametrize(("model", "needle"), [
    ("constant:nan", "finite"), ("constant:inf", "finite"), ("constant:-inf", "finite"),
    ("random,num_beams=0", "option 'num_beams'"), ("random,top_p=5", "option 'top_p'"),
    ("random,max_new_tokens=-1", "option 'max_new_tokens'"),
])
def test_bad_values_from_the_cli_exit_2_in_one_line(toy_registry: Registry, toy_data: object, tmp_path: object,
                                                     model: str, needle: str) -> None:
    outcome = run_cli(["eval", "toy-choice", "--model", model, "--data", str(toy_data), "--out", f"{tmp_path}/o",
                       "--quiet"])
    assert outcome.code == 2 and outcome.crash is None, outcome
    assert outcome.err.count("\n") == 1 and needle in outcome.err, outcome.err


def test_any_text_for_a_ranged_option_binds_in_range_or_fails_in_one_line() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), st.integers().map(str), st.text())

    @settings(max_examples=examples(300), deadline=None)
    @given(key=st.sampled_from(["beams", "p", "scale", "cap"]), text=numbers)
    def check(key: str, text: str) -> None:
        try:
            value = bind_options("model", "toy", _factory, {key: text})[key]
        except AbductError as exc:
            assert "\n" not in str(exc) and f"option '{key}'" in str(exc)
            return
        if value is not None:
            assert math.isfinite(value)
            assert {"beams": value >= 1, "p": 0 < value <= 1, "scale": True, "cap": value >= 1}[key]

    check()
