"""Every installed component's declared option ranges, walked through the real registry: a value
outside each one is refused in one line naming the component and option, before the factory
(and so any model) runs. Generated from the declarations, so a new option is covered at once."""

from __future__ import annotations

import pytest

from abduct import AbductError, Spec
from abduct.host import get_registry
from abduct_testing import declared_violations, run_cli

VIOLATIONS = list(declared_violations(get_registry()))


def test_the_packages_declare_ranges_for_their_numeric_options() -> None:
    declared = {(v.name, v.option) for v in VIOLATIONS}
    for expected in [("openai", "timeout"), ("openai", "backoff"), ("openai", "retries"),
                     ("decoding", "num_beams"), ("decoding", "top_p"), ("decoding", "max_new_tokens")]:
        assert expected in declared, expected
    assert any(option == "max_boxes" for _, option in declared) and any(option == "max_text" for _, option in declared)


@pytest.mark.parametrize("violation", [v for v in VIOLATIONS if v.name != "decoding"],
                         ids=lambda v: f"{v.kind}-{v.name}-{v.option}={v.value}")
def test_a_value_outside_a_declared_range_is_refused_before_the_factory_runs(violation: object) -> None:
    v = violation
    spec = Spec(v.name, "never-loaded", None, ((v.option, v.value),))  # type: ignore[attr-defined]
    with pytest.raises(AbductError) as caught:
        get_registry().create(v.kind, spec)  # type: ignore[attr-defined]
    message = str(caught.value)
    assert f"option '{v.option}'" in message and v.name in message and "\n" not in message, message  # type: ignore[attr-defined]


@pytest.mark.parametrize("model", ["openai:m,base_url=http://127.0.0.1:9/v1,timeout=-1",
                                   "openai:m,base_url=http://127.0.0.1:9/v1,timeout=nan",
                                   "openai:m,base_url=http://127.0.0.1:9/v1,backoff=-1",
                                   "openai:m,base_url=http://127.0.0.1:9/v1,top_p=5",
                                   "openai:m,base_url=http://127.0.0.1:9/v1,concurrency=0",  # N or auto[:MAX]: checked by the factory
                                   "openai:m,base_url=http://127.0.0.1:9/v1,concurrency=auto:0",
                                   "t5:tiny,max_new_tokens=-1", "vlm:tiny,max_new_tokens=0", "t5:tiny,num_beams=0",
                                   "lxmert:tiny,max_boxes=0", "uniter:tiny,max_text=0", "constant:nan"])
def test_bad_option_values_from_the_cli_exit_2_in_one_line(tmp_path: object, model: str) -> None:
    outcome = run_cli(["eval", "sherlock-retrieval", "--model", model, "--data", str(tmp_path), "--out",
                       f"{tmp_path}/out", "--quiet"])
    assert outcome.code == 2 and outcome.crash is None and outcome.err.count("\n") == 1, outcome
    assert "option '" in outcome.err or "finite" in outcome.err, outcome.err
