"""The changelog: towncrier renders the fragments in changelog.d/ and writes a release's entry
into CHANGELOG.md where it belongs; CHANGELOG.md holds the first entry, plugin authors' section
first; tools/check_fragments.py fails a branch that changes shipped code without a fragment."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import check_fragments  # noqa: E402

CHANGELOG = ROOT / "CHANGELOG.md"
FRAGMENTS = ROOT / "changelog.d"
TOOL = ROOT / "tools" / "check_fragments.py"
START = "<!-- towncrier release notes start -->"


def towncrier(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # towncrier has no library API (its commands are click functions): run it as its CLI. Outside
    # a git repository, `build` removes the fragments itself instead of `git rm`.
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(cwd.parent)}
    done = subprocess.run([sys.executable, "-m", "towncrier", *args], capture_output=True, text=True, cwd=cwd, env=env)
    assert "No module named towncrier" not in done.stderr, "towncrier is not installed (the integration session installs it)"
    return done


def test_the_fragments_render() -> None:
    """Every file of changelog.d/ is a well-named fragment or ignored (towncrier refuses any other)."""
    done = towncrier("build", "--draft", "--version", "9.9.9", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    fragments = [path for path in FRAGMENTS.iterdir() if path.name != "README.md"]
    assert "## 9.9.9 (" in done.stdout
    assert ("No significant changes." in done.stdout) == (not fragments), done.stdout


def test_a_release_writes_its_entry_above_the_last(tmp_path: Path) -> None:
    shutil.copy(ROOT / "towncrier.toml", tmp_path)
    shutil.copy(CHANGELOG, tmp_path)
    (tmp_path / "changelog.d").mkdir()
    shutil.copy(FRAGMENTS / "README.md", tmp_path / "changelog.d")
    (tmp_path / "changelog.d" / "+old.plugin-authors.md").write_text("**Deprecated, removed in 9.10:** `old`.\n")
    (tmp_path / "changelog.d" / "12.fix.md").write_text("`abduct eval` fixed.\n")

    done = towncrier("build", "--version", "9.9.9", "--date", "2030-01-02", "--yes", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "CHANGELOG.md").read_text(encoding="utf-8")
    header, body = text.split(START + "\n")
    assert header == CHANGELOG.read_text(encoding="utf-8").split(START)[0]
    # in this order, the section of plugin authors first, the new entry above the last one
    marks = ["## 9.9.9 (2030-01-02)", "### For plugin authors", "- **Deprecated, removed in 9.10:** `old`.",
             "### Fixes", "- `abduct eval` fixed. (#12)", "## 0.2.0 ("]
    assert body.lstrip().startswith(marks[0]), body[:200]
    assert [body.index(mark) for mark in marks] == sorted(body.index(mark) for mark in marks), body[:400]
    assert sorted(path.name for path in (tmp_path / "changelog.d").iterdir()) == ["README.md"]


def test_changelog_has_the_first_entry() -> None:
    text = CHANGELOG.read_text(encoding="utf-8")
    assert START in text
    entries = re.split(r"^## ", text.split(START, 1)[1], flags=re.MULTILINE)[1:]
    first = entries[-1]
    assert first.startswith("0.2.0 ("), first[:40]
    sections = re.findall(r"^### (.+)$", first, flags=re.MULTILINE)
    assert sections[0] == "For plugin authors", sections
    plugin_authors = first.split("### ", 2)[1]
    for what in ("`plan(examples, run)`", "abduct.host", "abduct_modelkit", "abduct-testing",
                 "render_run_pages", "ScoreContext", "`registry`", "PLUGIN_API = 1", "abduct-core>=0.2,<0.3"):
        assert what in plugin_authors, what
    # nothing was released before it: it deprecates nothing
    assert "Deprecated" not in plugin_authors and "removed in" not in plugin_authors


@pytest.mark.parametrize(("path", "folder"), [
    ("packages/core/src/abduct/__init__.py", "packages/core"),
    ("packages/datasets/sherlock/src/abduct_sherlock/tasks.py", "packages/datasets/sherlock"),
    ("packages/video/frames/src/abduct_video/py.typed", "packages/video/frames"),
    ("examples/abduct-tutorial/src/abduct_tutorial/plugin.py", "examples/abduct-tutorial"),
    ("packages/core/tests/test_runner.py", None),
    ("packages/core/pyproject.toml", None),
    ("packages/core/README.md", None),
    ("tests/src/helper.py", None),
    ("docs/plugins.md", None),
])
def test_shipped_code(path: str, folder: str | None) -> None:
    assert check_fragments.shipped_directory(path) == folder


class Repo:
    """A scratch git repository, isolated from the user's and the system's git configuration."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
                    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
                    "GIT_CEILING_DIRECTORIES": str(root.parent)}

    def git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.root, env=self.env, check=True, capture_output=True)

    def commit(self, files: dict[str, str]) -> None:
        for name, content in files.items():
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).write_text(content)
        self.git("add", "--all")
        self.git("commit", "--quiet", "--message", "change")

    def check(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(TOOL), *args], cwd=self.root, env=self.env,
                              capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.root.mkdir()
    repo.git("init", "--quiet", "--initial-branch", "main")
    repo.commit({"towncrier.toml": (ROOT / "towncrier.toml").read_text(), "changelog.d/README.md": "fragments\n",
                 "packages/x/pyproject.toml": '[project]\nname = "abduct-x"\n',
                 "packages/x/src/x/a.py": "A = 1\n", "packages/x/tests/test_a.py": "", "docs/x.md": ""})
    return repo


def test_a_change_to_shipped_code_needs_a_fragment(repo: Repo) -> None:
    done = repo.check()
    assert (done.returncode, done.stdout.strip()) == (0, "changelog fragments: nothing to check, HEAD is main")

    repo.git("switch", "--quiet", "--create", "change")
    repo.commit({"packages/x/src/x/a.py": "A = 2\n"})
    done = repo.check()
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: abduct-x changed since main without a changelog fragment: add one to changelog.d/, "
        "e.g. changelog.d/+short-slug.feature.md (changelog.d/README.md)"]

    repo.commit({"changelog.d/README.md": "fragments, and how to write one\n"})  # the README is no fragment
    assert repo.check().returncode == 1

    repo.commit({"changelog.d/+a-is-two.fix.md": "`A` is 2.\n"})
    done = repo.check()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "changelog fragments: abduct-x changed, changelog.d/+a-is-two.fix.md"
    assert repo.check("main").returncode == 0


def test_a_misnamed_fragment_is_refused(repo: Repo) -> None:
    repo.git("switch", "--quiet", "--create", "change")
    repo.commit({"packages/x/src/x/a.py": "A = 2\n", "changelog.d/a-is-two.md": "`A` is 2.\n",
                 "changelog.d/7.bugfix.md": "`A` is 2.\n", "changelog.d/8.fix.md": "`A` is 2.\n"})
    done = repo.check()
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: changelog.d/7.bugfix.md, changelog.d/a-is-two.md: a fragment is named <id>.<type>.md, <id> an issue "
        "number or +slug, <type> plugin-authors, feature, fix, performance, removal, doc, misc (changelog.d/README.md)"]


def test_changes_outside_shipped_code_need_none(repo: Repo) -> None:
    repo.git("switch", "--quiet", "--create", "tests-only")
    repo.commit({"packages/x/tests/test_a.py": "def test_a(): pass\n", "docs/x.md": "more\n"})
    done = repo.check()
    assert (done.returncode, done.stdout.strip()) == (0, "changelog fragments: no shipped code changed since main")


def test_the_base_defaults_to_origin_main(repo: Repo) -> None:
    """On a clone, the branch is compared with origin/main: a local main left behind does not count."""
    repo.git("switch", "--quiet", "--create", "change")
    repo.commit({"changelog.d/+a-is-two.fix.md": "`A` is 2.\n", "packages/x/src/x/a.py": "A = 2\n"})
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.commit({"packages/x/src/x/a.py": "A = 3\n"})
    done = repo.check()
    assert done.returncode == 1 and "since origin/main" in done.stderr, done.stderr
    assert repo.check("main").returncode == 0  # the fragment counts against main


def test_an_unknown_base_is_one_line(repo: Repo) -> None:
    done = repo.check("no-such-branch")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("error: git merge-base no-such-branch")
