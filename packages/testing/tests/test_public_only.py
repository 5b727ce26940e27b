"""The kit stands on abduct's public API: every name it exports is its own or a public name of
abduct (``abduct``, ``abduct.contract``, ``abduct.host``, ``abduct.kit``), and pytest loads its
hypothesis profiles through the kit's entry point, with no ``-p`` option."""

from __future__ import annotations

import importlib

import pytest

import abduct_testing

PUBLIC = ("abduct", "abduct.contract", "abduct.host", "abduct.kit")


def test_every_exported_name_is_the_kits_own_or_public_in_abduct() -> None:
    public = {name: module for module in PUBLIC for name in importlib.import_module(module).__all__}
    borrowed = []
    for name in abduct_testing.__all__:
        value = getattr(abduct_testing, name)
        home = getattr(value, "__module__", None) or ""
        if home.startswith("abduct_testing") or (not home and name not in public):  # a function or class
            continue  # of the kit, or one of its constants (a tuple has no __module__)
        if name not in public or getattr(importlib.import_module(public[name]), name) is not value:
            borrowed.append(f"{name} (from {home})")
    assert borrowed == []


def test_the_core_ships_no_test_kit() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("abduct.testing")


def test_the_profiles_are_a_pytest_plugin_by_entry_point(pytestconfig: pytest.Config) -> None:
    plugin = pytestconfig.pluginmanager.get_plugin("abduct_testing")
    assert plugin is not None and plugin.__name__ == "abduct_testing.profiles"
