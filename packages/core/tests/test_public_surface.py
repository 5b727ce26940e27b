"""The public surface 0.2.0 freezes: few names, each with one home, defined where it is imported
from; a contract an author reads in one sitting; and no DeprecationWarning before a first release.

Measured by tools/surface_report.py on the sources (run it for the figures)."""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))

import surface_report  # noqa: E402

DOORS = surface_report.DOORS
MAX_NAMES = 120
MAX_CONTRACT_LOC = 700


def _exports(door: str) -> dict[str, object]:
    module = importlib.import_module(door)
    return {name: getattr(module, name) for name in module.__all__}


def test_at_most_120_public_names_over_the_cores_doors() -> None:
    names = set().union(*(_exports(door) for door in DOORS))
    assert len(names) <= MAX_NAMES, len(names)


def test_the_source_count_is_what_the_modules_export() -> None:
    for door in DOORS:
        assert sorted(surface_report.exported(door)) == sorted(_exports(door)), door


def test_no_name_is_exported_by_two_doors_but_the_front_doors_share_of_the_contract() -> None:
    front, contract = set(_exports("abduct")), set(_exports("abduct.contract"))
    assert front <= contract, sorted(front - contract)
    seen: dict[str, str] = {}
    twice = []
    for door in ("abduct.contract", "abduct.host", "abduct.kit"):
        for name in _exports(door):
            if name in seen:
                twice.append(f"{name}: {seen[name]} and {door}")
            seen[name] = door
    assert twice == []


@pytest.mark.parametrize("door", ["abduct", "abduct.contract", "abduct.kit"])
def test_what_an_author_imports_is_defined_under_that_door(door: str) -> None:
    """A class or function an author imports is defined in the door's own public modules, not in
    a private module re-exported upward (``abduct.host`` is the exception by design: the facade a
    program that runs abduct uses, over the private modules that do the work)."""
    elsewhere = []
    for name, value in _exports(door).items():
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        module = value.__module__
        private = any(part.startswith("_") for part in module.split("."))
        if not (module == door or module.startswith(door + ".")) or private:
            elsewhere.append(f"{name} ({module})")
    assert elsewhere == []


def test_the_contract_and_what_it_imports_is_at_most_700_lines_of_code() -> None:
    report = surface_report.report()
    assert all(path.startswith("abduct/contract/") for path in report["contract_files"]), report["contract_files"]
    assert report["contract_loc"] <= MAX_CONTRACT_LOC, report["contract_loc"]


def test_the_line_counter_skips_blanks_comments_and_docstrings() -> None:
    text = '"""Doc\n\nstring."""\n\n# comment\nx = 1  # trailing\n\n\ndef f() -> None:\n    """doc"""\n    return\n'
    assert surface_report.code_lines(text) == 3


def _unreleased() -> bool:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    top = re.search(r"^## \S+ \((.*?)\)", changelog.split("<!-- towncrier release notes start -->", 1)[1], re.MULTILINE)
    return top is not None and top.group(1) == "unreleased"


def test_no_deprecation_warning_in_any_first_party_source_before_the_first_release() -> None:
    """Nothing has been released while the top CHANGELOG entry is unreleased, so there is nothing
    to deprecate: no first-party package's sources raise a DeprecationWarning."""
    if not _unreleased():
        pytest.skip("the top CHANGELOG entry is released: deprecations follow docs/plugins.md's rules")
    sources = [*ROOT.glob("packages/**/src/**/*.py"), *ROOT.glob("examples/*/src/**/*.py")]
    assert sources
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sources
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "DeprecationWarning" in line]
    assert found == []
