"""Test sessions, discovered from every package's pyproject.toml.

- one session per package, in its own environment holding only what it declares (plus its
  test extra and the local abduct-* packages it depends on): its tests, then ``mypy --strict``
  on its ``src/``;
- ``integration``: everything installed together plus the example plugin, running tests/;
- ``slurm``: tests/slurm on a one-node Slurm cluster that the tests start as root (munged,
  slurmctld, slurmd: ``abduct_testing.slurm``), ``abduct launch slurm --submit`` against one process;
- ``lint`` (ruff);
- ``wheels``: the release's dry run (tools/release.py): every sdist and wheel built once into
  dist/, checked, each wheel's data files verified, and the README's smallest install made from
  those wheels alone in a fresh venv, running its "Evaluate a model" commands.

Environments are made and filled by uv, which ``./dev test`` installs beside nox and which is
handed pip's index configuration below. uv hardlinks packages from its cache, so once torch is
in the cache a torch environment (abduct-clip's) takes about 5 s and 12 MB of disk, where pip
took 73 s and 5.7 GB. Every torch package therefore keeps its own environment: sharing one
would save about 5 s per package and let a package pass with a dependency it forgot to declare.
Torch is pinned to the version the machines carry and only packages that need it get it.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).parent
sys.path.insert(0, str(ROOT / "tools"))
from pip_to_uv import uv_like_pip  # noqa: E402  (tools/ is not a package)
from release import CHECKERS  # noqa: E402

CONSTRAINTS = ROOT / "constraints.txt"
# mypy's cache, shared by the sessions: torch and transformers are analysed once, not once per
# environment (a cold run of a transformers package takes ~35 s, a warm one ~2 s). mypy checks
# each cached module against its source by hash, and resolves imports in the session's own
# environment, so an undeclared import still fails. ./dev test gives each lane its own folder
# (two mypy processes must not write one cache at once).
MYPY_CACHE = Path(os.environ.get("ABDUCT_MYPY_CACHE", ROOT / ".nox" / ".mypy_cache"))
nox.options.default_venv_backend = "uv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True
uv_like_pip()


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
    """``name`` and the local abduct-* packages it needs, dependencies first. Test extras make
    cycles (abduct-core's tests need abduct-testing, which depends on abduct-core): a package
    already being visited is not visited again."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(dist: str) -> None:
        seen.add(dist)
        for dep in PACKAGES[dist]["deps"]:
            if dep in PACKAGES and dep not in seen:
                visit(dep)
        if dist not in order:
            order.append(dist)

    visit(name)
    return order


def _install(session: nox.Session, names: list[str]) -> None:
    """One resolution for everything; uv rebuilds the local directories it is given, so edits are
    tested. The torch build is a constraint, not a requirement: a package gets torch (and
    torchvision) only by declaring it."""
    targets = [f"./{PACKAGES[n]['dir'].relative_to(ROOT)}[test]" for n in names]
    session.install("-c", str(CONSTRAINTS), *targets)


def _pytest(session: nox.Session, tests: str, *options: str) -> None:
    # the slowest tests of every session go into its log, where ./dev test reads them for its
    # summary. The property tests' example counts (--thorough) come from abduct_testing.profiles,
    # a pytest plugin that the test kit's entry point loads wherever it is installed. A test
    # still running after 5 minutes dumps every thread's stack into the log (it is not stopped;
    # ./dev test stops a session past its limit), so a hang says where it hangs
    session.run("pytest", tests, "-q", "--durations=8", "--durations-min=1", "-o", "faulthandler_timeout=300",
                *options, *session.posargs)


def _typecheck(session: nox.Session, package_dir: Path) -> None:
    # Installed after the tests, which so run with only what the package declares (mypy brings
    # typing-extensions, pathspec and more). Run from the package's directory, so that a
    # [tool.mypy] table in its pyproject.toml applies.
    session.install("mypy", "types-tqdm")
    with session.chdir(package_dir):
        session.run("mypy", "--strict", "--cache-dir", str(MYPY_CACHE), "src")


def _uses_browser(package_dir: Path) -> bool:
    """Whether the package's tests open pages in Chromium (./dev test starts them once it is installed)."""
    return any("samples_browser" in test.read_text(encoding="utf-8") for test in (package_dir / "tests").rglob("*.py"))


for _name in PACKAGES:

    @nox.session(name=_name, python=None, tags=["browser"] if _uses_browser(PACKAGES[_name]["dir"]) else [])
    def _package_session(session: nox.Session, name: str = _name) -> None:
        _install(session, _local_closure(name))
        package_dir = PACKAGES[name]["dir"]
        _pytest(session, str((package_dir / "tests").relative_to(ROOT)))
        _typecheck(session, package_dir)


# tests/test_pages_in_browser.py opens every demo task's pages in Chromium. The session starts at
# once (it is the longest) and only those tests wait for Chromium (abduct_testing.browser_or_skip
# waits for ABDUCT_BROWSER_READY), so the install stays off the critical path.
@nox.session
def integration(session: nox.Session) -> None:
    """All packages and the example plugin together, exercising the CLI across packages."""
    _install(session, list(PACKAGES))
    # grimp for tests/test_architecture.py; towncrier (24.8: wildcard ignores, Markdown headings) for test_changelog.py
    session.install("import-linter>=2.1", "towncrier>=24.8")
    _pytest(session, "tests", "--ignore=tests/slurm")  # the slurm session's


# tests/slurm starts a real one-node Slurm cluster (munged, slurmctld, slurmd as root, from
# Debian's packages, which ./dev test installs in the background) and runs sharded evaluations
# on it as array jobs. Its own session, so that it runs beside integration rather than after it.
SLURM_PACKAGES = ("abduct-sherlock", "abduct-clip", "abduct-testing")


@nox.session
def slurm(session: nox.Session) -> None:
    """Sharded runs on a real single-node Slurm cluster equal one process's run."""
    closure = list(dict.fromkeys(dep for name in SLURM_PACKAGES for dep in _local_closure(name)))
    targets = [f"./{PACKAGES[n]['dir'].relative_to(ROOT)}[test]" for n in closure]
    # the launcher without its test extra: its own session brings Ray and the Kubernetes schemas
    session.install("-c", str(CONSTRAINTS), *targets, f"./{PACKAGES['abduct-launch']['dir'].relative_to(ROOT)}")
    _pytest(session, "tests/slurm")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, and the import contracts of .importlinter (lint-imports reads the packages' sources,
    so they are installed without their dependencies: no torch here)."""
    session.install("ruff", "import-linter>=2.1")
    session.run("ruff", "check", ".")
    session.install("--no-deps", *[f"./{info['dir'].relative_to(ROOT)}" for info in PACKAGES.values()])
    session.run("lint-imports")
    # shipped code changed on this branch needs a changelog fragment; 2: no base to compare with
    # (not a git checkout, or no main branch), which is said and not a failure here
    session.run("python", "tools/check_fragments.py", success_codes=[0, 2])


@nox.session
def wheels(session: nox.Session) -> None:
    """Build once, check, test what was built: ``tools/release.py --dry-run`` (build, twine check
    --strict, check-wheel-contents, verify-data, a local index, the README's smallest install from
    it and its 'Evaluate a model' commands). Nothing is uploaded."""
    session.install(*CHECKERS.values())  # twine, check-wheel-contents: release.py finds them beside its python
    session.run("python", "tools/release.py", "--dry-run")
