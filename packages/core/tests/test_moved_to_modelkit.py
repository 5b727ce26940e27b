"""The model side of the kit moved to abduct-modelkit: its names still import from abduct.kit for
one release, with a DeprecationWarning, and without abduct-modelkit the error says what to install."""

from __future__ import annotations

import re
import sys
import warnings

import pytest

import abduct.kit
from abduct import AbductError
from abduct.kit import install_command


def test_a_moved_name_without_abduct_modelkit_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "abduct_modelkit", None)  # None in sys.modules: the import fails
    with pytest.raises(AbductError, match=r"abduct\.kit\.load_weights_only moved to abduct_modelkit\.load_weights_only, "
                                          r"which is not installed: " + re.escape(install_command("abduct-modelkit"))):
        from abduct.kit import load_weights_only  # noqa: F401


def test_a_moved_name_imports_from_abduct_modelkit_with_a_warning() -> None:
    modelkit = pytest.importorskip("abduct_modelkit")
    with pytest.warns(DeprecationWarning) as caught:
        from abduct.kit import hub_access
    assert hub_access is modelkit.hub_access
    assert str(caught[0].message) == ("abduct.kit.hub_access moved to abduct_modelkit.hub_access "
                                      f"({install_command('abduct-modelkit')}); abduct.kit.hub_access is removed in abduct 0.3")
    assert caught[0].filename == __file__  # the warning points at the importer's line


def test_moved_names_are_not_the_kits_and_other_names_stay_missing() -> None:
    assert "render" not in abduct.kit.__all__ and "load_rgb" in abduct.kit.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="has no attribute 'no_such_helper'"):
            abduct.kit.no_such_helper  # noqa: B018
