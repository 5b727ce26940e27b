"""abduct-demo as a package: ``abduct demo`` comes from its plugin, whose entry module stays as
light as ``abduct``, and the names the core exported before (``abduct.DemoContext``, the old
``abduct.demo`` path) lead here with a DeprecationWarning."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import abduct
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


def test_the_cores_old_names_lead_here_with_a_deprecation_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.warns(DeprecationWarning, match=r"abduct\.DemoContext moved to abduct_demo\.DemoContext"):
        assert abduct.DemoContext is abduct_demo.DemoContext  # type: ignore[attr-defined]
    monkeypatch.delitem(sys.modules, "abduct.demo", raising=False)
    with pytest.warns(DeprecationWarning, match=r"abduct\.demo is deprecated"):
        old = importlib.import_module("abduct.demo")
    assert old.run_demo is abduct_demo.run_demo and old.own_cache is importlib.import_module("abduct_demo.runner").own_cache
