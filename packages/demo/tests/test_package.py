"""abduct-demo as a package: ``abduct demo`` comes from its plugin, whose entry module stays as
light as ``abduct``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import abduct_demo
from abduct.host import get_registry, main


def test_the_command_comes_from_this_package(capsys: pytest.CaptureFixture[str]) -> None:
    assert "demo" in {p.name for p in get_registry().plugins if p.distribution == "abduct-demo"}
    assert main(["demo", "--help"]) == 0
    assert capsys.readouterr().out.startswith("Usage: abduct demo [OPTIONS]")


def test_the_entry_module_stays_light() -> None:
    code = ("import sys, abduct_demo.plugin; "
            "print(sorted({'abduct.host', 'abduct._run', 'abduct_demo.runner', 'abduct_report', 'torch'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_names_load_on_use_and_unknown_ones_are_refused() -> None:
    assert abduct_demo.DemoTable.__module__ == "abduct_demo.runner"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        abduct_demo.nope  # noqa: B018


def test_the_hook_register_demos_is_this_packages() -> None:
    """abduct-demo declares ``register_demos`` (the core's ``add_hookspecs``); the core does not.
    A section registered before the demo's plugin (clip's) or after it (a test's) is listed."""
    import abduct.contract
    from abduct import Registration, hookimpl
    from abduct.host import build_registry
    from abduct_demo import hooks

    assert not hasattr(abduct.contract.hooks, "register_demos")

    class Section:
        @hookimpl(optionalhook=True)
        def register_demos(self) -> list[Registration]:
            return [Registration("toy-section", "a section", "demo_plugin:toy_demo")]

    registry = build_registry(extra_plugins=[("section", Section())])
    assert registry.manager.hook.register_demos.spec.namespace is hooks
    assert "toy-section" in {c.name for c in registry.components("demo")}
    clip = next((p for p in registry.plugins if p.name == "clip"), None)
    if clip is not None:  # a first-party section registered before the demo's plugin (plugins load by name)
        assert clip.error is None and clip.registers.get("demo") == ["sherlock-clip"]
