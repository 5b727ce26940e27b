"""Test sessions, discovered from every package's pyproject.toml.

- one session per package, in its own environment holding only what it declares (plus its
  test extra and the local abduct-* packages it depends on): its tests, then ``mypy --strict``
  on its ``src/``;
- ``integration``: everything installed together plus the example plugin, running tests/;
- ``lint`` (ruff).

Environments are made and filled by uv, which ``./dev test`` installs beside nox and which is
handed pip's index configuration below. uv hardlinks packages from its cache, so once torch is
in the cache a torch environment (abduct-clip's) takes about 5 s and 12 MB of disk, where pip
took 73 s and 5.7 GB. Every torch package therefore keeps its own environment: sharing one
would save about 5 s per package and let a package pass with a dependency it forgot to declare.
Torch is pinned to the version the machines carry and only packages that need it get it.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).parent
CONSTRAINTS = ROOT / "constraints.txt"
TORCH = [line for line in CONSTRAINTS.read_text().splitlines() if line.strip() and not line.startswith("#")]
NEEDS_TORCH = {"torch", "torchvision", "open_clip_torch", "open-clip-torch", "transformers", "bert-score"}
nox.options.default_venv_backend = "uv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True
# pip's options that uv takes from environment variables, and the separator uv wants between values
PIP_TO_UV = [
    ("index-url", "UV_INDEX_URL", " "),
    ("extra-index-url", "UV_EXTRA_INDEX_URL", " "),
    ("find-links", "UV_FIND_LINKS", ","),
    ("cert", "SSL_CERT_FILE", " "),
]


def _pip_settings() -> dict[str, str]:
    """pip's configured options, from ``pip config list`` (``pip config get`` reads one file only)."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    settings = {}
    for section in ("global.", "install.", ":env:."):  # lowest precedence first, as pip install reads them
        for key, _, value in (line.partition("=") for line in listed.splitlines()):
            if key.startswith(section):
                settings[key.removeprefix(section)] = ast.literal_eval(value)
    return settings


def _uv_like_pip() -> None:
    """uv does not read pip's configuration: hand it the indexes, wheel folders and CA bundle pip uses."""
    pip = _pip_settings()
    for option, variable, separator in PIP_TO_UV:
        if option in pip and variable not in os.environ:
            os.environ[variable] = separator.join(pip[option].split())
            if option == "extra-index-url":  # pip takes the best version across its indexes, uv the first index's
                os.environ.setdefault("UV_INDEX_STRATEGY", "unsafe-best-match")


_uv_like_pip()


def _requirement_name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower()


def _discover() -> dict[str, dict]:
    found = {}
    for pyproject in sorted([*ROOT.glob("packages/**/pyproject.toml"), *ROOT.glob("examples/*/pyproject.toml")]):
        project = tomllib.loads(pyproject.read_text())["project"]
        found[project["name"]] = {
            "dir": pyproject.parent,
            # the test extra counts too: a package may keep heavy local packages (abduct-var's
            # frame stack) in an extra that its tests install
            "deps": [_requirement_name(r) for r in
                     [*project.get("dependencies", []), *project.get("optional-dependencies", {}).get("test", [])]],
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
    """One resolution for everything; uv rebuilds the local directories it is given, so edits are tested."""
    torch = TORCH if _needs_torch(names) else []
    targets = [f"./{PACKAGES[n]['dir'].relative_to(ROOT)}[test]" for n in names]
    session.install(*torch, *targets)


def _typecheck(session: nox.Session, package_dir: Path) -> None:
    # Installed after the tests, which so run with only what the package declares (mypy brings
    # typing-extensions, pathspec and more). Run from the package's directory, so that a
    # [tool.mypy] table in its pyproject.toml applies; one cache per environment, as each one
    # holds other packages.
    session.install("mypy", "types-tqdm")
    cache = Path(session.virtualenv.location) / ".mypy_cache"
    with session.chdir(package_dir):
        session.run("mypy", "--strict", "--cache-dir", str(cache), "src")


for _name in PACKAGES:

    @nox.session(name=_name, python=None)
    def _package_session(session: nox.Session, name: str = _name) -> None:
        _install(session, _local_closure(name))
        package_dir = PACKAGES[name]["dir"]
        session.run("pytest", str((package_dir / "tests").relative_to(ROOT)), "-q", *session.posargs)
        _typecheck(session, package_dir)


@nox.session
def integration(session: nox.Session) -> None:
    """All packages and the example plugin together, exercising the CLI across packages."""
    _install(session, list(PACKAGES))
    session.install("import-linter>=2.1")  # grimp, for tests/test_architecture.py
    session.run("pytest", "tests", "-q", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, and the import contracts of .importlinter (lint-imports reads the packages' sources,
    so they are installed without their dependencies: no torch here)."""
    session.install("ruff", "import-linter>=2.1")
    session.run("ruff", "check", ".")
    session.install("--no-deps", *[f"./{info['dir'].relative_to(ROOT)}" for info in PACKAGES.values()])
    session.run("lint-imports")
