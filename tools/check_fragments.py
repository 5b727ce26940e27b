"""Fail a branch that changes shipped code without a changelog fragment.

    python tools/check_fragments.py [BASE]

Reads the commits from the merge-base of BASE and HEAD to HEAD (BASE defaults to ``origin/main``
when it exists, else ``main``); uncommitted changes do not count. When they change shipped code
(``packages/**/src/**``, ``examples/**/src/**``) and add or edit no fragment in ``changelog.d/``
(its README does not count), or add a file there whose name is not ``<id>.<type>.md``, it prints
one line naming the distributions concerned and exits 1. Exit 0 otherwise, and when HEAD is the
merge-base (nothing to check); exit 2 when BASE or the repository cannot be read. The fragment
directory, the files it ignores and the types come from ``towncrier.toml`` (changelog.d/README.md).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from fnmatch import fnmatch
from pathlib import PurePosixPath

SHIPPED_ROOTS = ("packages", "examples")
DEFAULTS = {"directory": "changelog.d", "ignore": [], "orphan_prefix": "+"}
# what towncrier itself never reads as a fragment, besides the configuration's ``ignore``
IGNORED = (".gitignore", ".gitkeep", ".keep", "readme", "readme.md", "readme.rst")


class Unreadable(Exception):
    """BASE or the repository cannot be read (exit 2)."""


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise Unreadable(f"git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return done.stdout


def show(revision: str, path: str) -> str | None:
    done = subprocess.run(["git", "show", f"{revision}:{path}"], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def settings() -> tuple[str, list[str], str, list[str]]:
    """The fragment directory, the names it ignores, the orphan prefix and the types (none: any)."""
    text = show("HEAD", "towncrier.toml")
    config = tomllib.loads(text).get("tool", {}).get("towncrier", {}) if text else {}
    merged = {**DEFAULTS, **config}
    types = [entry["directory"] for entry in config.get("type", [])]
    ignore = [*IGNORED, *(pattern.lower() for pattern in merged["ignore"])]
    return merged["directory"].strip("/"), ignore, merged["orphan_prefix"], types


def default_base() -> str:
    for candidate in ("origin/main", "main"):
        if subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"],
                          capture_output=True).returncode == 0:
            return candidate
    raise Unreadable("neither origin/main nor main exists: name the base, python tools/check_fragments.py BASE")


def distribution(directory: str, base: str) -> str:
    """The project name in ``directory``/pyproject.toml (at HEAD, else at ``base``), else the folder."""
    for revision in ("HEAD", base):
        text = show(revision, f"{directory}/pyproject.toml")
        if text:
            name = tomllib.loads(text).get("project", {}).get("name")
            if isinstance(name, str):
                return name
    return directory


def shipped_directory(path: str) -> str | None:
    """The distribution folder of a file under ``packages/**/src/`` or ``examples/**/src/``."""
    parts = PurePosixPath(path).parts
    if len(parts) < 4 or parts[0] not in SHIPPED_ROOTS or "src" not in parts[2:-1]:
        return None
    return "/".join(parts[: parts.index("src", 2)])


def check(base: str) -> tuple[int, str]:
    head = git("rev-parse", "HEAD").strip()
    start = git("merge-base", base, "HEAD").strip()
    if start == head:
        return 0, f"changelog fragments: nothing to check, HEAD is {base}"
    directory, ignore, orphan, types = settings()
    type_pattern = "|".join(map(re.escape, types)) if types else r"[a-z][a-z-]*"
    fragment_name = re.compile(rf"^(\d+|{re.escape(orphan)}[A-Za-z0-9_-]+)\.({type_pattern})(\.\d+)?\.md$")

    changed: set[str] = set()
    fragments: list[str] = []
    misnamed: list[str] = []
    listing = git("diff", "--name-status", "--no-renames", "-z", start, "HEAD").split("\0")
    for status, path in zip(listing[0::2], listing[1::2], strict=False):
        if (folder := shipped_directory(path)) is not None:
            changed.add(folder)
        location = PurePosixPath(path)
        ignored = any(fnmatch(location.name.lower(), pattern) for pattern in ignore)
        if location.parent.as_posix() == directory and not ignored and status != "D":
            (fragments if fragment_name.match(location.name) else misnamed).append(path)

    if misnamed:
        kinds = ", ".join(types) if types else "a type"
        return 1, (f"error: {', '.join(sorted(misnamed))}: a fragment is named <id>.<type>.md, <id> an issue "
                   f"number or {orphan}slug, <type> {kinds} ({directory}/README.md)")
    if not changed:
        return 0, f"changelog fragments: no shipped code changed since {base}"
    names = ", ".join(sorted(distribution(folder, start) for folder in changed))
    if not fragments:
        return 1, (f"error: {names} changed since {base} without a changelog fragment: add one to {directory}/, "
                   f"e.g. {directory}/{orphan}short-slug.feature.md ({directory}/README.md)")
    return 0, f"changelog fragments: {names} changed, {', '.join(sorted(fragments))}"


def main(argv: list[str]) -> int:
    if argv in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: python tools/check_fragments.py [BASE]", file=sys.stderr)
        return 2
    try:
        code, message = check(argv[0] if argv else default_base())
    except Unreadable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(message, file=sys.stderr if code else sys.stdout)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
