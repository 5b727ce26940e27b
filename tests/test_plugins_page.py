"""docs/plugins.md and docs/plugin-reference.md stay true: their snippets run, in the environment
the pages say, and print what they show; the tutorial they quote is examples/abduct-tutorial,
and written from the page alone into an empty folder and installed from the checkout as the
page says, it passes its tests; the lists of public names are exactly the modules' names.

Blocks of a page, by the comment right above them:
- ``<!-- file: PATH -->``: the block is the whole of PATH (from the checkout's root);
- ``<!-- needs: DIST ... -->``: a snippet that runs with these distributions installed beside abduct-core;
- any other ```python block runs as a script, in a fresh environment holding abduct-core alone;
  a ```text block right after it is what it prints.
Lists of names sit between ``<!-- names: MODULE -->`` and ``<!-- end names -->``, one
``- `name`: ...`` a line."""

from __future__ import annotations

import ast
import importlib
import os
import re
import shlex
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import fresh_venv

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "plugins.md"
REFERENCE = ROOT / "docs" / "plugin-reference.md"
TUTORIAL = ROOT / "examples" / "abduct-tutorial"
MARKER = re.compile(r"^<!-- (file|needs): (.+?) -->$")
# the tutorial's files the page quotes whole (its README is the one line step 1 writes; tests/test_refusals.py
# holds checks beyond the page's)
QUOTED = {"pyproject.toml", "src/abduct_tutorial/light.py", "src/abduct_tutorial/model.py",
          "src/abduct_tutorial/plugin.py", "tests/test_tutorial.py"}


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    text: str
    marker: tuple[str, str] | None  # (kind, value) of the comment right above it
    output: str | None = None  # the ```text block right after a runnable block

    @property
    def where(self) -> str:
        return f"docs/{self.page.name}:{self.line}"


def blocks(page: Path) -> list[Block]:
    lines, found, i = page.read_text(encoding="utf-8").splitlines(), [], 0
    while i < len(lines):
        if lines[i].startswith("```") and len(lines[i]) > 3:
            end = lines.index("```", i + 1)
            above = MARKER.match(lines[i - 1]) if i else None
            found.append(Block(page, i + 1, lines[i][3:], "\n".join(lines[i + 1:end]) + "\n",
                               (above.group(1), above.group(2)) if above else None))
            i = end
        i += 1
    for before, after in zip(found, found[1:]):  # an output block follows its snippet after one blank line
        if before.lang == "python" and before.marker is None or (before.marker or ("",))[0] == "needs":
            if after.lang == "text" and after.line == before.line + before.text.count("\n") + 3:
                before.output = after.text
    return found


def tutorial_section() -> list[Block]:
    """The tutorial's blocks, in the page's order."""
    text = PAGE.read_text(encoding="utf-8").splitlines()
    start = text.index("## Tutorial: from an empty folder to `abduct eval`") + 1
    end = next(i for i in range(start, len(text)) if text[i].startswith("## "))
    return [b for b in blocks(PAGE) if start < b.line <= end]


def _is_snippet(block: Block) -> bool:
    return block.lang == "python" and (block.marker is None or block.marker[0] == "needs")


SNIPPETS = [b for page in (PAGE, REFERENCE) for b in blocks(page) if _is_snippet(b)]


# --- fresh environments, as a reader makes them ------------------------------------------------------------------

def _projects() -> dict[str, tuple[Path, list[str]]]:
    """Every distribution of the checkout: its folder and the names it depends on."""
    found = {}
    for pyproject in [*ROOT.glob("packages/**/pyproject.toml"), *ROOT.glob("examples/*/pyproject.toml")]:
        project = tomllib.loads(pyproject.read_text())["project"]
        deps = [re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower() for r in project.get("dependencies", [])]
        found[project["name"]] = (pyproject.parent, deps)
    return found


def _folders(distributions: set[str]) -> list[Path]:
    """The checkout's folders that installing ``distributions`` needs (no index has them)."""
    projects, needed = _projects(), set()
    todo = list(distributions)
    while todo:
        name = todo.pop()
        if name in projects and name not in needed:
            needed.add(name)
            todo.extend(projects[name][1])
    return sorted(projects[n][0] for n in needed)


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would leak this checkout's packages into another interpreter."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "VIRTUAL_ENV")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def environments(tmp_path_factory: pytest.TempPathFactory) -> dict[frozenset[str], Path]:
    """One fresh environment per set of distributions the snippets need, each made once."""
    made: dict[frozenset[str], Path] = {}
    for block in SNIPPETS:
        needs = frozenset({"abduct-core", *(block.marker[1].split() if block.marker else ())})
        if needs not in made:
            venv = tmp_path_factory.mktemp("venv")
            install = fresh_venv(venv)
            subprocess.run([*install, *map(str, _folders(set(needs)))], check=True)
            made[needs] = venv / "bin" / "python"
    return made


# --- the pages ----------------------------------------------------------------------------------------------------

def test_the_plugin_page_is_read_in_an_hour() -> None:
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 1000, f"docs/plugins.md is {len(lines)} lines"
    first_screen = "\n".join(lines[:16])
    for root in ("`abduct`", "`abduct.kit`", "`abduct_modelkit`", "`abduct_testing`"):
        assert root in first_screen, f"the first screen of docs/plugins.md does not name {root}"


def test_the_pages_have_a_running_snippet_for_every_hook() -> None:
    from abduct.contract import hooks  # the hook specifications, to hold the pages to all of them

    specs = {name for name in dir(hooks) if name.startswith("register_")}
    shown = {name for name in specs if any(f"def {name}(" in b.text for b in SNIPPETS)}
    assert specs == shown, f"hooks without a snippet on the pages: {sorted(specs - shown)}"


@pytest.mark.parametrize("block", SNIPPETS, ids=[f"{b.page.stem}-{b.line}" for b in SNIPPETS])
def test_snippet_runs_and_prints_what_the_page_shows(block: Block, tmp_path: Path,
                                                     environments: dict[frozenset[str], Path]) -> None:
    python = environments[frozenset({"abduct-core", *(block.marker[1].split() if block.marker else ())})]
    script = tmp_path / "snippet.py"
    script.write_text(block.text)
    env = clean_env(ABDUCT_CACHE_DIR=str(tmp_path / "cache"), PYTHONWARNINGS="error::DeprecationWarning")
    done = subprocess.run([str(python), str(script)], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{done.stderr[-3000:]}"
    if block.output is not None:
        assert done.stdout == block.output, f"{block.where}: the page shows other output"


def test_quoted_files_are_the_tutorials_files() -> None:
    quoted = {}
    for block in blocks(PAGE) + blocks(REFERENCE):
        if block.marker is not None and block.marker[0] == "file":
            path = block.marker[1]
            assert block.text == (ROOT / path).read_text(encoding="utf-8"), f"{block.where} differs from {path}"
            quoted[path] = block
    assert set(quoted) == {f"examples/abduct-tutorial/{name}" for name in QUOTED}
    sources = {str(p.relative_to(TUTORIAL)) for p in (TUTORIAL / "src").rglob("*.py") if p.read_text().strip()}
    assert sources <= QUOTED, "a source file of the tutorial is not on the page"


def test_the_tutorial_is_under_100_lines_and_imports_two_roots() -> None:
    sources = list((TUTORIAL / "src").rglob("*.py"))
    assert 0 < sum(len(p.read_text().splitlines()) for p in sources) < 100
    for path, allowed in [*((p, {"abduct", "abduct.kit"}) for p in sources),
                          (TUTORIAL / "tests" / "test_tutorial.py", {"abduct_testing"})]:
        roots = {node.module for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("abduct")}
        roots |= {alias.name for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Import)
                  for alias in node.names if alias.name.startswith("abduct")}
        assert roots - {"abduct_tutorial", "abduct_tutorial.model"} <= allowed, f"{path.name} imports {roots}"


def test_the_test_extra_is_shown_one_way() -> None:
    """abduct-testing appears pinned as abduct-core is, in the tutorial's pyproject.toml, and nowhere otherwise."""
    project = tomllib.loads((TUTORIAL / "pyproject.toml").read_text())["project"]
    core = next(r for r in project["dependencies"] if r.startswith("abduct-core"))
    assert f"abduct-testing{core.removeprefix('abduct-core')}" in project["optional-dependencies"]["test"]
    for page in (PAGE, REFERENCE):
        text = page.read_text(encoding="utf-8")
        shown = re.findall(r"[\"']abduct-testing[^\"']*[\"']", text)
        assert set(shown) <= {f'"abduct-testing{core.removeprefix("abduct-core")}"'}, f"{page.name}: {shown}"


def test_the_tutorial_written_from_the_page_alone_passes_its_tests(tmp_path: Path) -> None:
    """Step by step as the page says, in an empty folder: the shell blocks run, the quoted files are
    written, the install comes from the checkout (with ``pip`` as uv where it is here), the
    pictures snippet and the evaluations run, and the tutorial's tests pass on the first try."""
    venv = tmp_path / "venv"
    install = fresh_venv(venv)
    work = tmp_path / "reader"
    work.mkdir()
    plugin = work / "abduct-tutorial"
    env = clean_env(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", ABDUCT_CACHE_DIR=str(tmp_path / "cache"))
    prelude = f"set -euo pipefail\npip() {{ {shlex.join(install)} \"${{@:2}}\"; }}\n"  # pip install ARGS, into the venv
    said_passed = None
    for block in tutorial_section():
        folder = work if not plugin.exists() else plugin  # step 1 makes the plugin's folder; the rest runs in it
        if block.marker is not None and block.marker[0] == "file":
            target = plugin / block.marker[1].removeprefix("examples/abduct-tutorial/")
            assert target.parent.is_dir(), f"{block.where}: step 1 did not make {target.parent}"
            target.write_text(block.text)
        elif block.lang == "bash":
            script = block.text.replace("path/to/abduct", str(ROOT))
            done = subprocess.run(["bash", "-c", prelude + script], cwd=folder, capture_output=True, text=True,
                                  env=env)
            assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
            if said := re.search(r"^pytest .*# (\d+ passed(?:, \d+ skipped)?)", block.text, flags=re.MULTILINE):
                said_passed = said.group(1)
                assert said_passed in done.stdout, f"{block.where}: the page says {said_passed}\n{done.stdout[-3000:]}"
        elif block.lang == "python":
            done = subprocess.run([str(venv / "bin" / "python"), "-c", block.text], cwd=folder, capture_output=True,
                                  text=True, env=env)
            assert done.returncode == 0 and done.stdout == block.output, f"{block.where}: {done.stderr[-3000:]}"
    assert said_passed is not None, "the tutorial never runs its tests"
    results = plugin / "run" / "results.json"
    assert results.is_file() and '"accuracy": 100.0' in results.read_text()


# --- the lists of public names ------------------------------------------------------------------------------------

def listed_names() -> dict[str, list[str]]:
    text = REFERENCE.read_text(encoding="utf-8")
    found = {}
    for module, body in re.findall(r"<!-- names: (\S+) -->\n(.*?)<!-- end names -->", text, flags=re.DOTALL):
        found[module] = re.findall(r"^- `(\w+)`", body, flags=re.MULTILINE)
    return found


def test_the_name_lists_are_the_public_names() -> None:
    lists = listed_names()
    assert set(lists) == {"abduct", "abduct.contract", "abduct.host", "abduct.kit", "abduct_modelkit"}
    for module_name, names in lists.items():
        module = importlib.import_module(module_name)
        assert len(names) == len(set(names)), f"{module_name}: a name is listed twice"
        public = set(module.__all__)
        if module_name == "abduct.contract":  # its list holds the names abduct does not re-export
            import abduct

            public -= set(abduct.__all__)
        assert sorted(set(names) - public) == [], f"the page lists names {module_name} does not export"
        assert sorted(public - set(names)) == [], f"{module_name} exports names the page does not list"
