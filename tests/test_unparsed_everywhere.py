"""Every registered task that reads an answer from a model's text reports ``unparsed`` with its
rate and reasons (abduct.kit.answers), declared lower-is-better. A task says it reads answers
from text by its ``answer=`` option offering ``generate`` (answered by reading a generated
answer, as NL-EYE's triplets, WHOOPS!'s identification and BlackSwan's questions are); the
list is read from the registry, so a new such task is checked the day it is registered."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from abduct import Spec
from abduct.host import get_registry, options_of, task_traits
from abduct.kit.answers import UNPARSED_INFO


def _reads_text(factory: Any) -> bool:
    option = options_of(factory).get("answer")
    return option is not None and "generate" in get_args(option.value_type)


READING = sorted(c.name for c in get_registry().components("task") if _reads_text(c.registration.load()))


def test_the_known_text_reading_tasks_are_found() -> None:
    assert {"nleye-triplet", "whoops-identification", "blackswan-mcq", "blackswan-yn"} <= set(READING)


@pytest.mark.parametrize("name", READING)
def test_each_declares_unparsed_with_rate_and_reasons(name: str) -> None:
    info = task_traits(get_registry().create("task", Spec(name)), name).metric_info
    missing = [key for key in UNPARSED_INFO if key not in info]
    assert not missing, f"{name} reads answers from text but does not declare {missing}"
    assert info["unparsed"].better == info["unparsed_rate"].better == "lower"


@pytest.mark.parametrize("spec", ["vlm:tiny", "openai:m,base_url=http://127.0.0.1:9/v1", "lmms:llava_hf"])
def test_every_generating_model_declares_reasoning_and_refuses_a_bad_pattern_first(spec: str) -> None:
    """Checked before any weight is read or server asked: one line naming the model."""
    from abduct import AbductError

    assert "reasoning" in options_of(get_registry().get("model", spec.split(":")[0]).registration.load())
    with pytest.raises(AbductError, match=r"reasoning='\[' is neither auto, none, a tag name nor a valid regular"):
        get_registry().create("model", f"{spec},reasoning=[")
