"""Every package README's shell blocks follow the top README's rules (tests/test_readme.py): they
run from the checkout's root, write only under ``scratch/``, say why when they are not run, and
install from the checkout's folders (no index has abduct's distributions yet), naming every
abduct distribution the installed ones need."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from test_readme import ROOT, SKIP, bash_blocks, outputs_outside_scratch, run_blocks

READMES = sorted(path.parent / "README.md" for path in ROOT.glob("packages/**/pyproject.toml")
                 if (path.parent / "README.md").is_file())
IDS = [readme.parent.relative_to(ROOT / "packages").as_posix() for readme in READMES]
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _distributions() -> dict[str, tuple[Path, dict[str, list[str]]]]:
    """name -> (folder, {"": abduct dependencies, extra: that extra's abduct dependencies})."""
    found = {}
    for pyproject in ROOT.glob("packages/**/pyproject.toml"):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        groups = {"": project.get("dependencies", []), **project.get("optional-dependencies", {})}
        needs = {extra: [n for n in (_canonical(_NAME.match(r).group(0)) for r in reqs)  # type: ignore[union-attr]
                         if n.startswith("abduct-")] for extra, reqs in groups.items()}
        found[_canonical(project["name"])] = (pyproject.parent, needs)
    return found


DISTRIBUTIONS = _distributions()
BY_FOLDER = {folder.resolve(): name for name, (folder, _) in DISTRIBUTIONS.items()}


def _missing_from_install(block: str) -> list[str]:
    """What is wrong with a block's ``pip install`` lines, run from the checkout's root."""
    problems, named, needed = [], set(), set()
    for line in block.splitlines():
        if not line.startswith("pip install "):
            continue
        words = shlex.split(line, comments=True)
        for word in (w for w in words[2:] if not w.startswith("-")):
            if _canonical(word).startswith("abduct-"):
                problems.append(f"{word}: no index has it; name its folder (./packages/...)")
            if not word.startswith("./"):
                continue  # torch, a URL after --index-url, ...
            folder, _, extras = word.partition("[")
            name = BY_FOLDER.get((ROOT / folder).resolve())
            if name is None:
                problems.append(f"{word}: not a distribution's folder")
                continue
            named.add(name)
            needs = DISTRIBUTIONS[name][1]
            needed.update(needs[""], *(needs.get(e.strip(), []) for e in extras.rstrip("]").split(",") if e.strip()))
    closure = set(needed)
    while new := {d for n in closure for d in DISTRIBUTIONS[n][1][""]} - closure:
        closure |= new
    problems += [f"installing {sorted(named)} needs {name}: name ./{DISTRIBUTIONS[name][0].relative_to(ROOT)} too"
                 for name in sorted(closure - named)]
    return problems


def test_every_package_readme_is_found() -> None:
    assert {"core", "datasets/whoops", "datasets/nleye", "models/vlm"} <= set(IDS)


@pytest.mark.parametrize("readme", READMES, ids=IDS)
def test_each_block_is_run_or_says_why_not(readme: Path) -> None:
    for number, text in bash_blocks(readme):
        first = text.splitlines()[0]
        if first.startswith("#") and "not run" in first:
            assert first.startswith(SKIP) and len(first) > len(SKIP) + 5, f"{readme}:{number}: say why it is skipped"


@pytest.mark.parametrize("readme", READMES, ids=IDS)
def test_outputs_go_under_scratch_and_installs_name_the_checkout_folders(readme: Path) -> None:
    assert outputs_outside_scratch(readme) == []
    for number, text in bash_blocks(readme):
        assert _missing_from_install(text) == [], f"{readme.relative_to(ROOT)}:{number}"


def test_the_install_check_catches_an_index_name_and_a_missing_dependency() -> None:
    assert _missing_from_install("pip install abduct-whoops")[0].startswith("abduct-whoops: no index")
    assert _missing_from_install("pip install ./packages/core ./packages/datasets/whoops  # ok?") == [
        "installing ['abduct-core', 'abduct-whoops'] needs abduct-metrics: name ./packages/metrics too",
        "installing ['abduct-core', 'abduct-whoops'] needs abduct-modelkit: name ./packages/modelkit too"]
    assert _missing_from_install('pip install ./packages/core ./packages/modelkit "./packages/models/clip[demo]"')


RUNNABLE = [(readme, name) for readme, name in zip(READMES, IDS, strict=True)
            if any(not text.startswith(SKIP) for _, text in bash_blocks(readme))]


@pytest.mark.parametrize("readme", [r for r, _ in RUNNABLE], ids=[n for _, n in RUNNABLE])
def test_the_package_readme_commands_run(readme: Path, tmp_path: Path) -> None:
    assert run_blocks(readme, tmp_path) >= 1
