"""The hints that name a missing package work where abduct was installed from: in this checkout
each names a folder that holds the distribution, and no source writes ``pip install abduct-...``
by hand (each goes through ``abduct.kit.install_command``)."""

from __future__ import annotations

import ast
import os
import tomllib
from pathlib import Path

import pytest

from abduct._registry.providers import PROVIDERS
from abduct.kit import install, install_command

SOURCES = ("packages/*/src", "packages/*/*/src", "examples/*/src")


def test_in_this_checkout_every_hint_names_a_folder_that_holds_the_distribution(root: Path) -> None:
    checkout = install.installed_from_checkout()
    if checkout is None:
        pytest.skip("abduct-core is not installed from a checkout here: the hints name the index's packages")
    assert checkout.resolve() == root.resolve()
    for distribution in sorted({*PROVIDERS.values(), "abduct-modelkit", "abduct-testing"}):
        command = install_command(distribution)
        assert command.startswith("pip install "), command
        folder = Path(command.removeprefix("pip install "))
        assert folder.is_dir(), f"{command}: no such folder (from {os.getcwd()})"
        assert tomllib.loads((folder / "pyproject.toml").read_text())["project"]["name"] == distribution


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def test_no_source_writes_an_install_hint_by_hand(root: Path) -> None:
    by_hand = []
    for pattern in SOURCES:
        for path in sorted(p for src in root.glob(pattern) for p in src.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = _docstrings(tree)
            by_hand += [f"{path.relative_to(root)}:{node.lineno}" for node in ast.walk(tree)
                        if isinstance(node, ast.Constant) and isinstance(node.value, str)
                        and "pip install abduct" in node.value.replace("'", "").replace('"', "")
                        and id(node) not in docstrings]
    assert by_hand == [], "write these hints with abduct.kit.install_command"
