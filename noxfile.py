"""Test sessions, discovered from every package's pyproject.toml.

- one session per package, in its own environment holding only what it declares (plus its
  test extra and the local abduct-* packages it depends on);
- ``integration``: everything installed together plus the example plugin, running tests/;
- ``lint`` (ruff) and ``typecheck`` (mypy, strict on the core).

Torch environments cost minutes and gigabytes each, so torch is pinned to the version the
machines carry and only packages that need it get it.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).parent
TORCH = ["torch==2.14.1", "torchvision==0.29.1"]
NEEDS_TORCH = {"torch", "torchvision", "open_clip_torch", "open-clip-torch", "transformers", "bert-score", "decord"}
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True


def _requirement_name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower()


def _discover() -> dict[str, dict]:
    found = {}
    for pyproject in sorted([*ROOT.glob("packages/**/pyproject.toml"), *ROOT.glob("examples/*/pyproject.toml")]):
        project = tomllib.loads(pyproject.read_text())["project"]
        found[project["name"]] = {
            "dir": pyproject.parent,
            "deps": [_requirement_name(r) for r in project.get("dependencies", [])],
        }
    return found


PACKAGES = _discover()


def _local_closure(name: str) -> list[str]:
    """``name`` and the local abduct-* packages it needs, dependencies first."""
    order: list[str] = []

    def visit(dist: str) -> None:
        for dep in PACKAGES[dist]["deps"]:
            if dep in PACKAGES and dep not in order:
                visit(dep)
        if dist not in order:
            order.append(dist)

    visit(name)
    return order


def _needs_torch(names: list[str]) -> bool:
    return any(set(PACKAGES[n]["deps"]) & NEEDS_TORCH for n in names)


def _install(session: nox.Session, names: list[str]) -> None:
    if _needs_torch(names):
        session.install(*TORCH)
    targets = [str(PACKAGES[n]["dir"].relative_to(ROOT)) + "[test]" for n in names]
    session.install(*targets)


for _name in PACKAGES:

    @nox.session(name=_name, python=None)
    def _package_session(session: nox.Session, name: str = _name) -> None:
        _install(session, _local_closure(name))
        tests = PACKAGES[name]["dir"] / "tests"
        session.run("pytest", str(tests.relative_to(ROOT)), "-q", *session.posargs)


@nox.session
def integration(session: nox.Session) -> None:
    """All packages and the example plugin together, exercising the CLI across packages."""
    _install(session, list(PACKAGES))
    session.run("pytest", "tests", "-q", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    session.install("mypy", "types-tqdm", "packages/core[test]")
    session.run("mypy", "--strict", "packages/core/src/abduct")
