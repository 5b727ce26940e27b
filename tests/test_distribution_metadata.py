"""What an index shows of every distribution, and the one version they share (tools/bump_version.py
says the scheme): read from the pyproject.toml files, nothing installed or built."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from abduct.contract.hooks import PLUGIN_API

ROOT = Path(__file__).resolve().parents[1]
BUMP = ROOT / "tools" / "bump_version.py"
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
PYPROJECTS = sorted(path for path in [*ROOT.glob("packages/**/pyproject.toml"), *ROOT.glob("examples/*/pyproject.toml")]
                    if not any(part.startswith(".") for part in path.relative_to(ROOT).parts))
PROJECTS = {path.parent.relative_to(ROOT).as_posix(): tomllib.loads(path.read_text(encoding="utf-8"))["project"]
            for path in PYPROJECTS}
FIRST_PARTY = {project["name"] for project in PROJECTS.values()}
URL_BASE = "https://github.com/abduct-project/abduct"
CLASSIFIERS = {
    "Development Status :: 3 - Alpha",
    "Intended Audience :: Science/Research",
    "Programming Language :: Python :: 3.11",
    "Programming Language :: Python :: 3.12",
    "Topic :: Scientific/Engineering :: Artificial Intelligence",
}


def compatible(version: str) -> str:
    """``>=X.Y,<X.(Y+1)`` before 1.0, ``>=X.Y,<X+1`` from 1.0."""
    major, minor = (int(part) for part in version.split(".")[:2])
    return f">={major}.{minor},<{major}.{minor + 1}" if major == 0 else f">={major}.{minor},<{major + 1}"


def requirements(project: dict) -> list[tuple[str, str]]:
    found = [("dependencies", r) for r in project.get("dependencies", [])]
    for extra, listed in project.get("optional-dependencies", {}).items():
        found += [(f"[{extra}]", r) for r in listed]
    return found


def test_the_distributions_are_found() -> None:
    assert {"abduct-core", "abduct-tutorial", "abduct-plugin-example"} <= FIRST_PARTY
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION), f"VERSION holds {VERSION!r}"


# Where the number of distributions is written down; docs/test-times.md is left out, a log of
# measurements each made on the tree of its day.
COUNTED = ["README.md", "CHANGELOG.md", "towncrier.toml", "docs/*.md", "packages/**/README.md", "examples/*/README.md"]
# each stated count, and what it counts in distributions (releasing.md's files: an sdist and a wheel each)
STATED = {r"(\d+) distributions": 1, r"(\d+) projects": 1, r"(\d+) sdists": 1, r"(\d+) wheels": 1,
          r"the (\d+) under `packages/": "packages", r"the (\d+) files": 2, r"all (\d+) files": 2}


def test_every_stated_count_of_distributions_is_the_real_one() -> None:
    """The counts in the README, the docs and the CHANGELOG's unreleased entry agree with the
    pyproject.toml files (the examples are distributions too: they are built and released)."""
    packages = sum(1 for where in PROJECTS if where.startswith("packages/"))
    assert len(PROJECTS) - packages == len(list(ROOT.glob("examples/*/pyproject.toml")))
    seen, wrong = 0, []
    for pattern in COUNTED:
        for path in sorted(ROOT.glob(pattern)):
            if path.name == "test-times.md" or any(part.startswith(".") for part in path.relative_to(ROOT).parts):
                continue
            text = path.read_text(encoding="utf-8")
            if path.name == "CHANGELOG.md":  # released entries keep the count of their day
                text = text.split("\n## ")[1] if "(unreleased)" in text.split("\n## ")[1] else ""
            for stated, per in STATED.items():
                for match in re.finditer(stated, text):
                    expected = packages if per == "packages" else len(PROJECTS) * int(per)
                    seen += 1
                    if int(match.group(1)) != expected:
                        wrong.append(f"{path.relative_to(ROOT)}: '{match.group(0)}', expected {expected}")
    assert wrong == [], "\n".join(wrong)
    assert seen >= 8  # README, releasing.md (distributions, sdists, wheels, files, projects), CHANGELOG, towncrier.toml


WHY = "**Why a separate distribution:** "


@pytest.mark.parametrize("where", sorted(PROJECTS))
def test_the_readme_says_in_one_line_why_it_is_a_distribution(where: str) -> None:
    """Near the top, a paragraph of one line: the dependency it keeps out of abduct-core, or an
    audience of its own (abduct-core's says what it is kept to)."""
    lines = (ROOT / where / "README.md").read_text(encoding="utf-8").splitlines()
    found = [i for i, line in enumerate(lines) if line.startswith(WHY)]
    assert len(found) == 1, f"{where}: README.md needs one line starting {WHY!r}, found {len(found)}"
    i = found[0]
    first_section = next((j for j, line in enumerate(lines) if line.startswith("## ")), len(lines))
    assert i < first_section and i < 20, f"{where}: the reason is not near the top (line {i + 1})"
    assert lines[i - 1] == "" and (i + 1 == len(lines) or lines[i + 1] == ""), f"{where}: the reason is not one line"
    reason = lines[i].removeprefix(WHY)
    if PROJECTS[where]["name"] != "abduct-core":
        assert "out of abduct-core" in reason or "audience of its own" in reason, f"{where}: {reason}"


@pytest.mark.parametrize("where", sorted(PROJECTS))
def test_name_version_and_import_name(where: str) -> None:
    project = PROJECTS[where]
    name = project["name"]
    assert re.fullmatch(r"abduct-[a-z0-9]+(-[a-z0-9]+)*", name), name
    assert project["version"] == VERSION, f"{where}: version {project['version']}, VERSION says {VERSION}"
    packages = tomllib.loads((ROOT / where / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"][
        "packages"]
    expected = "abduct" if name == "abduct-core" else name.replace("-", "_")
    assert packages == [f"src/{expected}"], f"{where}: {name} ships {packages}, expected the import name {expected}"


@pytest.mark.parametrize("where", sorted(PROJECTS))
def test_what_an_index_shows(where: str) -> None:
    project, folder = PROJECTS[where], ROOT / where
    name = project["name"]
    assert project.get("readme") == "README.md", f"{where}: readme"
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(f"# {name}\n") and len(readme) >= 500, f"{where}: README.md is not about {name}"
    assert project.get("description", "").strip(), f"{where}: description"
    assert project.get("license") == "MIT", f"{where}: license"
    if "license-files" in project:
        assert all(list(folder.glob(pattern)) for pattern in project["license-files"]), f"{where}: license-files"
    assert project.get("requires-python") == ">=3.11", f"{where}: requires-python"
    assert project.get("authors") == [{"name": "abduct contributors"}], f"{where}: authors"
    classifiers = set(project.get("classifiers", []))
    assert CLASSIFIERS <= classifiers, f"{where}: classifiers lack {sorted(CLASSIFIERS - classifiers)}"
    typed = any((folder / "src").glob("*/py.typed"))
    assert ("Typing :: Typed" in classifiers) == typed, f"{where}: Typing :: Typed iff a py.typed is shipped"
    assert not any(c.startswith("License ::") for c in classifiers), f"{where}: the license is the SPDX expression"
    keywords = project.get("keywords", [])
    assert len(keywords) >= 3 and len(set(keywords)) == len(keywords), f"{where}: keywords"
    urls = project.get("urls", {})
    assert urls.get("Homepage") == URL_BASE, f"{where}: Homepage"
    assert urls.get("Documentation") == f"{URL_BASE}/tree/main/docs", f"{where}: Documentation"
    assert urls.get("Changelog") == f"{URL_BASE}/blob/main/CHANGELOG.md", f"{where}: Changelog"
    assert urls.get("Issues") == f"{URL_BASE}/issues", f"{where}: Issues"
    assert all(url.startswith(URL_BASE) for url in urls.values()), f"{where}: one URL base"


@pytest.mark.parametrize("where", sorted(PROJECTS))
def test_first_party_requirements_carry_the_compatible_range(where: str) -> None:
    wrong = []
    for place, text in requirements(PROJECTS[where]):
        requirement = Requirement(text)
        if requirement.name in FIRST_PARTY and requirement.specifier != SpecifierSet(compatible(VERSION)):
            wrong.append(f"{place} {text!r}")
    assert wrong == [], f"{where}: expected {compatible(VERSION)} on {wrong}"
    assert compatible("0.2.0") == ">=0.2,<0.3" and compatible("1.4.2") == ">=1.4,<2"


@pytest.mark.parametrize("where", sorted(w for w, p in PROJECTS.items() if "abduct" in p.get("entry-points", {})))
def test_every_plugin_declares_its_plugin_api(where: str) -> None:
    entry_points = PROJECTS[where]["entry-points"]
    api = entry_points.get("abduct.api", {})
    assert set(api) == set(entry_points["abduct"]), f"{where}: abduct.api names differ from the abduct group's"
    assert all(value == f"abduct.api:v{PLUGIN_API}" for value in api.values()), f"{where}: {api}"


def test_every_version_agrees_with_the_version_file() -> None:
    done = subprocess.run([sys.executable, str(BUMP), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_abduct_version_is_the_version_file() -> None:
    import abduct
    from abduct._cli import cli  # the core's group: --version answers before any plugin loads

    assert abduct.__version__ == VERSION
    assert CliRunner().invoke(cli, ["--version"]).output.strip() == f"abduct, version {VERSION}"


def _copy(tmp_path: Path) -> Path:
    """The files bump_version reads and writes, in a scratch tree."""
    copy = tmp_path / "repo"
    wanted = [*PYPROJECTS, ROOT / "VERSION", *ROOT.glob("packages/**/src/*/__init__.py"),
              *ROOT.glob("examples/*/src/*/__init__.py"), *ROOT.glob("docs/*.md")]
    for path in wanted:
        if not any(part.startswith(".") for part in path.relative_to(ROOT).parts):
            (copy / path.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy / path.relative_to(ROOT))
    return copy


def _bump(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BUMP), "--root", str(root), *args], capture_output=True, text=True)


def test_bump_moves_every_version_and_pin(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    assert _bump(root, "--check").returncode == 0
    done = _bump(root, "0.3.0")
    assert done.returncode == 0, done.stderr
    assert (root / "VERSION").read_text() == "0.3.0\n"
    for path in PYPROJECTS:
        moved = tomllib.loads((root / path.relative_to(ROOT)).read_text())["project"]
        assert moved["version"] == "0.3.0"
        for place, text in requirements(moved):
            requirement = Requirement(text)
            if requirement.name in FIRST_PARTY:
                assert str(requirement.specifier) == str(SpecifierSet(">=0.3,<0.4")), f"{path}: {place} {text}"
        # nothing else of [project] moved
        original = tomllib.loads(path.read_text())["project"]
        assert {k: v for k, v in moved.items() if k not in ("version", "dependencies", "optional-dependencies")} == \
            {k: v for k, v in original.items() if k not in ("version", "dependencies", "optional-dependencies")}
        assert [Requirement(r).name for _, r in requirements(moved)] == \
            [Requirement(r).name for _, r in requirements(original)]
    init = (root / "packages/core/src/abduct/__init__.py").read_text()
    assert '__version__ = "0.3.0"' in init
    page = (root / "docs/plugins.md").read_text()  # the tutorial's quoted pyproject.toml and shown output
    assert '"abduct-core>=0.3,<0.4"' in page and "(abduct-tutorial 0.3.0)" in page
    assert _bump(root, "--check").returncode == 0
    # a patch release keeps the ranges; the check names what disagrees, one line each
    assert _bump(root, "0.3.1").returncode == 0
    assert '"abduct-core>=0.3,<0.4"' in (root / "packages/demo/pyproject.toml").read_text()
    (root / "VERSION").write_text("0.4.0\n")
    check = _bump(root, "--check")
    assert check.returncode == 1
    lines = check.stdout.splitlines()
    assert "packages/core/pyproject.toml: version is '0.3.1', expected '0.4.0'" in lines
    assert any(line.startswith("packages/demo/pyproject.toml: dependencies: 'abduct-core>=0.3,<0.4'") for line in lines)
    assert any(line.startswith("packages/core/src/abduct/__init__.py: __version__") for line in lines)


def test_bump_refuses_what_is_not_a_version(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    for bad in ("0.3", "v0.3.0", "0.3.0rc1"):
        done = _bump(root, bad)
        assert done.returncode == 2 and "not a version" in done.stderr, bad
    assert (root / "VERSION").read_text().strip() == VERSION
