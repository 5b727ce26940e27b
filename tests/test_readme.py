"""The README's commands run as written in the environment the README sets up.

Each ```bash block runs in order, in one empty directory (so a block may use what an
earlier one made), with the installed ``abduct`` first on PATH; a block whose first line is
``# not run by the README test: <why>`` is skipped (set-up, downloads, the user's own data).
The commands write only under ``scratch/``, which .gitignore covers: run from the checkout's
root, they leave nothing else behind.
``./dev demo`` must install every package of the README's table, so that the environment it
makes is the one these commands ran in."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SKIP = "# not run by the README test:"
SCRATCH = "scratch"  # where every README command writes
MAX_LINES = 250  # the front page: what abduct is, set-up, one table, one example per job; details in each package


def bash_blocks(readme: Path = README) -> list[tuple[int, str]]:
    """(line number, text) of every ```bash block of ``readme`` (the top README by default)."""
    blocks, lines = [], readme.read_text(encoding="utf-8").splitlines()
    start = None
    for number, line in enumerate(lines, 1):
        if start is None and line.strip() == "```bash":
            start = number
        elif start is not None and line.strip() == "```":
            blocks.append((start, textwrap.dedent("\n".join(lines[start:number - 1]))))  # a block in a list is indented
            start = None
    return blocks


def test_every_block_is_run_or_says_why_not() -> None:
    blocks = bash_blocks()
    assert blocks, "the README has shell blocks"
    for number, text in blocks:
        first = text.splitlines()[0]
        if first.startswith("#") and "not run" in first:
            assert first.startswith(SKIP) and len(first) > len(SKIP) + 5, f"README.md:{number}: say why it is skipped"


def run_blocks(readme: Path, tmp_path: Path) -> int:
    """Run the blocks of ``readme`` that are not skipped, in order, in one empty folder standing
    for the checkout's root; each must succeed and write nothing outside ``scratch/``. How many ran."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "ABDUCT_CACHE_DIR": str(tmp_path / "cache")}
    where = tmp_path / "checkout"  # stands for the checkout's root
    where.mkdir()
    name = readme.relative_to(ROOT).as_posix()
    ran = 0
    for number, text in bash_blocks(readme):
        if text.startswith(SKIP):
            continue
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=where, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"{name}:{number}: exit {done.returncode}\n{done.stderr[-2000:]}"
        assert {p.name for p in where.iterdir()} <= {SCRATCH}, f"{name}:{number}: writes outside {SCRATCH}/"
        ran += 1
    return ran


def test_the_readme_commands_run(tmp_path: Path) -> None:
    assert run_blocks(README, tmp_path) >= 4


def test_the_readme_commands_write_under_one_ignored_folder() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert f"/{SCRATCH}/" in ignored or f"{SCRATCH}/" in ignored
    assert outputs_outside_scratch(README) == []


def outputs_outside_scratch(readme: Path) -> list[str]:
    """The outputs that ``readme``'s blocks name outside ``scratch/``, the skipped blocks' too."""
    name = readme.relative_to(ROOT).as_posix()
    return [f"{name}:{number}: {option} {path}" for number, text in bash_blocks(readme)
            for option, path in re.findall(r"(--out|--html|--include_path|>)\s+(\S+)", text)
            if path != "DIR" and not path.startswith(f"{SCRATCH}/")]


def test_dev_demo_installs_every_package_of_the_table() -> None:
    table = re.findall(r"^\| \[`(packages/[^`]+)`\]\(", README.read_text(encoding="utf-8"), flags=re.MULTILINE)
    dev = (ROOT / "dev").read_text(encoding="utf-8")
    demo = re.search(r"^  demo\)\n(.*?);;", dev, flags=re.MULTILINE | re.DOTALL)
    full = re.search(r"^full_venv\(\) \{(.*?)^\}", dev, flags=re.MULTILINE | re.DOTALL)  # ./dev bench shares it
    packages = re.search(r"^FULL=\((.*?)\)$", dev, flags=re.MULTILINE | re.DOTALL)  # what full_venv installs
    assert table and demo is not None and full is not None and "full_venv" in demo.group(1)
    assert packages is not None and '"${FULL[@]}"' in full.group(1)
    missing = [path for path in table if f"./{path}" not in packages.group(1)]
    assert missing == [], f"./dev demo does not install {missing}, which README commands use"


def test_the_readme_is_short_and_links_each_package_readme() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES, f"README.md has {len(text.splitlines())} lines (at most {MAX_LINES})"
    packages = sorted(path.parent.relative_to(ROOT).as_posix() for path in ROOT.glob("packages/**/pyproject.toml"))
    assert packages
    unlinked = [package for package in packages if f"]({package}/README.md)" not in text]
    assert unlinked == [], f"README.md does not link {unlinked}"
    missing = [target for target in re.findall(r"\]\(((?:packages|examples)/[^)#]+)", text)
               if not (ROOT / target).exists()]
    assert missing == [], f"README.md links to {missing}, which do not exist"
