"""A spec part the component never reads (``random@foo``, ``cosim:abc``) is refused in one
line with exit 2, for every kind, without any declaration by the factory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct import Registration, hookimpl
from abduct._cli import main
from abduct._registry.registry import Registry, build_registry
from abduct.contract.errors import AbductError
from abduct.contract.spec import Settings, Spec
from abduct.kit.answers import ExactMatch


@pytest.mark.parametrize("model, message", [
    ("random@foo", "model 'random' does not use the tag '@foo'"),
    ("constant:1@x", "model 'constant' does not use the tag '@x'"),
])
def test_an_unused_tag_is_refused(toy_registry: Registry, toy_data: Path, tmp_path: Path, model: str, message: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "toy-choice", "--model", model, "--data", str(toy_data), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "o").exists()


def test_an_unused_argument_of_a_task_or_metric_is_refused(toy_registry: Registry) -> None:
    with pytest.raises(AbductError, match="task 'toy-choice' does not use the argument ':abc'"):
        toy_registry.create("task", "toy-choice:abc")
    with pytest.raises(AbductError, match="does not use the argument ':x' and the tag '@y'"):
        toy_registry.create("metric", "exact-match:x@y")


def test_parts_the_factory_reads_are_accepted() -> None:
    registry = build_registry()
    assert registry.create("model", "random:3", Settings()).fingerprint == "random-seed3"
    assert registry.create("model", "constant:0.5") is not None


SEEN: list[str] = []


def make_echo(spec: Spec, settings: Settings) -> object:
    SEEN.append(str(spec))  # reads the argument and the tag through str()
    return ExactMatch()


class EchoPlugin:
    @hookimpl
    def register_metrics(self) -> Iterator[Registration]:
        yield Registration("echo-spec", "reads str(spec)", f"{__name__}:make_echo")


def test_reading_the_spec_in_any_way_counts_as_use() -> None:
    registry = build_registry(extra_plugins=[("echo", EchoPlugin())])
    registry.create("metric", Spec.parse("echo-spec:a@b"))
    assert SEEN == ["echo-spec:a@b"]
