"""docs/plugins.md stays true: its snippets run and print what it shows, the tutorial it quotes is
the tutorial's code, and its lists of helpers are exactly the front door's, the kit's and the model kit's names.

Blocks of the page, by what precedes them:
- ``<!-- file: PATH -->``: the block is the whole of PATH (from the checkout's root);
- ``<!-- excerpt: PATH -->``: the block is a part of PATH, as it stands there;
- any other ```python block runs as a script in a scratch directory; a ```text block right after
  it is what it prints.
Lists of names sit between ``<!-- names: MODULE -->`` and ``<!-- end names -->``, one
``- `name`: ...`` a line."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "plugins.md"
TUTORIAL = ROOT / "examples" / "abduct-tutorial"
MARKER = re.compile(r"^<!-- (file|excerpt): (\S+) -->$")


@dataclass
class Block:
    line: int
    lang: str
    text: str
    marker: tuple[str, str] | None  # (kind, path) of the comment right above it
    output: str | None = None  # the ```text block right after a runnable block


def blocks() -> list[Block]:
    lines, found, i = PAGE.read_text(encoding="utf-8").splitlines(), [], 0
    while i < len(lines):
        if lines[i].startswith("```") and len(lines[i]) > 3:
            end = lines.index("```", i + 1)
            above = MARKER.match(lines[i - 1]) if i else None
            found.append(Block(i + 1, lines[i][3:], "\n".join(lines[i + 1:end]) + "\n",
                               (above.group(1), above.group(2)) if above else None))
            i = end
        i += 1
    for before, after in zip(found, found[1:]):  # an output block follows its snippet after one blank line
        if before.lang == "python" and before.marker is None and after.lang == "text" and after.line == before.line + before.text.count("\n") + 3:
            before.output = after.text
    return found


SNIPPETS = [b for b in blocks() if b.lang == "python" and b.marker is None]


def test_the_page_has_a_running_snippet_for_every_hook() -> None:
    from abduct.contract import hooks  # the hook specifications, to hold the page to all of them

    specs = {name for name in dir(hooks) if name.startswith("register_")}
    shown = {name for name in specs if any(f"def {name}(" in b.text for b in SNIPPETS)}
    assert specs == shown, f"hooks without a snippet on the page: {sorted(specs - shown)}"


@pytest.mark.parametrize("block", SNIPPETS, ids=[f"line-{b.line}" for b in SNIPPETS])
def test_snippet_runs_and_prints_what_the_page_shows(block: Block, tmp_path: Path) -> None:
    script = tmp_path / "snippet.py"
    script.write_text(block.text)
    env = {**os.environ, "ABDUCT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONWARNINGS": "error::DeprecationWarning:__main__"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 0, f"docs/plugins.md:{block.line}: exit {done.returncode}\n{done.stderr[-3000:]}"
    if block.output is not None:
        assert done.stdout == block.output, f"docs/plugins.md:{block.line}: the page shows other output"


def test_quoted_files_are_the_tutorials_files() -> None:
    quoted = {}
    for block in blocks():
        if block.marker is not None:
            kind, path = block.marker
            source = (ROOT / path).read_text(encoding="utf-8")
            if kind == "file":
                assert block.text == source, f"docs/plugins.md:{block.line} differs from {path}"
                quoted[path] = block
            else:
                assert block.text in source, f"docs/plugins.md:{block.line} is not a part of {path}"
    sources = {str(p.relative_to(ROOT)) for p in (TUTORIAL / "src").rglob("*.py") if p.read_text().strip()}
    assert sources | {"examples/abduct-tutorial/pyproject.toml"} == set(quoted)


def test_the_tutorial_is_under_100_lines() -> None:
    lines = sum(len(p.read_text().splitlines()) for p in (TUTORIAL / "src").rglob("*.py"))
    assert 0 < lines < 100, f"the tutorial's source is {lines} lines"


def listed_names() -> dict[str, list[str]]:
    text = PAGE.read_text(encoding="utf-8")
    found = {}
    for module, body in re.findall(r"<!-- names: (\S+) -->\n(.*?)<!-- end names -->", text, flags=re.DOTALL):
        found[module] = re.findall(r"^- `(\w+)`", body, flags=re.MULTILINE)
    return found


def test_the_helper_lists_are_the_public_names() -> None:
    lists = listed_names()
    assert set(lists) == {"abduct", "abduct.contract", "abduct.host", "abduct.kit", "abduct.legacy", "abduct_modelkit"}
    for module_name, names in lists.items():
        module = importlib.import_module(module_name)
        assert len(names) == len(set(names)), f"{module_name}: a name is listed twice"
        missing = [n for n in names if not hasattr(module, n)]
        assert missing == [], f"the page lists {missing}, which {module_name} does not have"
        unlisted = sorted(set(module.__all__) - set(names))
        if module_name != "abduct.contract":  # the contract's list holds its rarer names; abduct lists the rest
            assert unlisted == [], f"{module_name}.__all__ has {unlisted}, which the page does not list"
        assert set(names) <= set(module.__all__), f"the page lists private names of {module_name}"


def test_the_front_door_is_narrow_and_moved_names_still_import() -> None:
    import warnings

    import abduct
    import abduct.host

    assert len(abduct.__all__) <= 45
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert abduct.run_evaluation is abduct.host.run_evaluation
    assert "abduct.run_evaluation moved to abduct.host.run_evaluation" in str(caught[0].message)
