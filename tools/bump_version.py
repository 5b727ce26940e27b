"""The version of every first-party distribution, in one place, and the command that moves it.

    python tools/bump_version.py            # prints the version (the VERSION file)
    python tools/bump_version.py 0.3.0      # moves every distribution to 0.3.0
    python tools/bump_version.py --check    # exit 1, one line per place that disagrees with VERSION

The scheme
----------

- **One version for the monorepo.** Every distribution under ``packages/`` and ``examples/``
  (``abduct-core``, the plugins, the kits, the examples) is released together under the same
  version, as OpenTelemetry's Python monorepo does: a user who installs ``abduct-core 0.3.1`` and
  ``abduct-clip 0.3.1`` knows they were tested together. The root file ``VERSION`` is the single
  source of truth; this tool copies it into each ``pyproject.toml`` (``[project] version``), each
  package's ``__version__`` line (``abduct.__version__``, which ``abduct --version`` prints;
  ``abduct plugins`` shows the installed distributions' versions) and the quoted copies of those
  files in ``docs/`` (``<!-- file: PATH -->`` blocks, and ``(abduct-NAME X.Y.Z)`` in shown output).
- **Versions are X.Y.Z** (final releases only). A distribution that changed nothing still gets
  the new version: the set is the unit of release.
- **What a number promises.** Before 1.0, a new minor (0.2 -> 0.3) may change the plugin
  contract (hooks, protocols, records; deprecated names are removed one minor after they were
  deprecated) and a patch (0.3.0 -> 0.3.1) may not. From 1.0 on, only a new major may.
- **Pins between first-party distributions** follow from that: every requirement of one
  first-party distribution on another, in ``dependencies`` and in every extra, is the compatible
  range of the current version, ``>=X.Y,<X.(Y+1)`` before 1.0 (``abduct-core>=0.2,<0.3``) and
  ``>=X.Y,<(X+1)`` from 1.0 (``abduct-core>=1.4,<2``). Any patch release of the same minor
  therefore satisfies every other distribution of that minor, and a core of the next minor
  does not install under an old plugin. A bump to a new minor (or major) rewrites the ranges;
  a patch bump leaves them as they are.
- Third-party plugins are asked to pin ``abduct-core`` the same way (the plugin example and
  the tutorial do), and declare the plugin contract they were written for in the
  ``abduct.api`` entry-point group (one entry per name of their ``abduct`` group, value:
  ``"abduct.api:vN"``, N the contract's number); this tool does not touch those.

``--root DIR`` works on another checkout (tests/test_distribution_metadata.py runs it on a
copy). Release tooling runs ``--check`` before it builds anything; the same test runs it too.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
# a PEP 508 requirement as the pyproject files write it: name, extras, specifier, marker
REQUIREMENT_RE = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<extras>\[[^\]]*\])?\s*"
                            r"(?P<spec>[^;]*?)\s*(?:;\s*(?P<marker>.*))?$")
INIT_VERSION_RE = re.compile(r'^__version__ = "([^"]*)"', flags=re.MULTILINE)
DOC_BLOCK_RE = re.compile(r"(<!-- file: (?P<path>\S+) -->\n```[a-z]*\n)(.*?)(^```$)",
                          flags=re.MULTILINE | re.DOTALL)


def parse_version(text: str) -> tuple[int, int, int]:
    match = VERSION_RE.match(text.strip())
    if not match:
        raise ValueError(f"not a version X.Y.Z: {text.strip()!r}")
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def compatible_range(version: str) -> str:
    """The specifier every first-party requirement carries at ``version``."""
    major, minor, _ = parse_version(version)
    upper = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    return f">={major}.{minor},<{upper}"


def pyprojects(root: Path) -> list[Path]:
    found = [*root.glob("packages/**/pyproject.toml"), *root.glob("examples/*/pyproject.toml")]
    return sorted(path for path in found
                  if not any(part.startswith(".") for part in path.relative_to(root).parts))


def first_party_names(root: Path) -> set[str]:
    names = (tomllib.loads(path.read_text(encoding="utf-8"))["project"]["name"] for path in pyprojects(root))
    return {_normalized(name) for name in names}


def init_files(root: Path) -> list[Path]:
    """Each distribution's ``src/<package>/__init__.py`` that has a ``__version__`` line."""
    found = []
    for pyproject in pyprojects(root):
        for init in sorted((pyproject.parent / "src").glob("*/__init__.py")):
            if INIT_VERSION_RE.search(init.read_text(encoding="utf-8")):
                found.append(init)
    return found


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return _normalized(re.split(r"[\s<>=!~;@\[]", requirement.strip(), maxsplit=1)[0])


def pin(requirement: str, spec: str) -> str:
    """``requirement`` with its specifier replaced by ``spec`` (extras and marker kept)."""
    match = REQUIREMENT_RE.match(requirement.strip())
    if not match:
        raise ValueError(f"cannot read requirement {requirement!r}")
    marker = f"; {match['marker'].strip()}" if match["marker"] else ""
    return f"{match['name']}{match['extras'] or ''}{spec}{marker}"


def _split_comment(line: str) -> tuple[str, str]:
    """``line`` as (code, comment): the comment starts at the first ``#`` outside a string."""
    quote = ""
    for position, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[:position], line[position:]
    return line, ""


def _requirement_lines(lines: list[str]) -> list[int]:
    """Indices of the lines of a pyproject.toml holding requirements: the ``dependencies``
    array of ``[project]`` and every line of ``[project.optional-dependencies]``."""
    found, table, in_dependencies = [], "", False
    for index, line in enumerate(lines):
        code = re.sub(r'"[^"]*"', '""', _split_comment(line)[0]).strip()
        if not in_dependencies and code.startswith("["):
            table = code
            continue
        if table == "[project]" and not in_dependencies and re.match(r"dependencies\s*=\s*\[", code):
            in_dependencies = True
            code = code.split("[", 1)[1]
        if in_dependencies or table == "[project.optional-dependencies]":
            found.append(index)
        if in_dependencies and "]" in code:
            in_dependencies = False
    return found


def rewrite_pyproject(text: str, version: str, first_party: set[str]) -> str:
    """``text`` with ``[project] version`` set to ``version`` and every first-party requirement
    pinned to its compatible range; everything else (comments, order, layout) as it was."""
    spec = compatible_range(version)
    lines = text.splitlines(keepends=True)
    table = ""
    for index, line in enumerate(lines):
        if line.startswith("["):
            table = line.strip()
        elif table == "[project]" and re.match(r'version\s*=\s*"', line):
            lines[index] = re.sub(r'"[^"]*"', f'"{version}"', line, count=1)

    def quoted(match: re.Match[str]) -> str:
        requirement = match.group(1)
        if _requirement_name(requirement) in first_party:
            return f'"{pin(requirement, spec)}"'
        return match.group(0)

    for index in _requirement_lines(lines):
        code, comment = _split_comment(lines[index])
        lines[index] = re.sub(r'"([^"]*)"', quoted, code) + comment
    new = "".join(lines)
    _verify(new, version, first_party)
    return new


def _requirements(project: dict) -> list[tuple[str, str]]:
    """(where, requirement) for every requirement of ``[project]``."""
    found = [("dependencies", r) for r in project.get("dependencies", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        found += [(f"optional-dependencies.{extra}", r) for r in requirements]
    return found


def problems_of_pyproject(text: str, version: str, first_party: set[str]) -> list[str]:
    project = tomllib.loads(text)["project"]
    problems = []
    if project.get("version") != version:
        problems.append(f"version is {project.get('version')!r}, expected {version!r}")
    spec = compatible_range(version)
    for where, requirement in _requirements(project):
        if _requirement_name(requirement) in first_party and requirement != pin(requirement, spec):
            problems.append(f"{where}: {requirement!r}, expected {pin(requirement, spec)!r}")
    return problems


def _verify(text: str, version: str, first_party: set[str]) -> None:
    problems = problems_of_pyproject(text, version, first_party)
    if problems:  # a layout the line scanner does not know: say so rather than write half a bump
        raise SystemExit("bump_version: could not rewrite every place: " + "; ".join(problems))


def rewrite_docs(root: Path, version: str, first_party: set[str]) -> dict[Path, str]:
    """The docs pages that quote a pyproject.toml or ``__init__.py`` (``<!-- file: PATH -->``
    blocks), with the quote refreshed from the file and shown ``(abduct-NAME X.Y.Z)`` output
    (``abduct plugins``) at ``version``."""
    changed = {}
    names = "|".join(sorted(re.escape(name) for name in first_party)) or "(?!)"
    for page in sorted((root / "docs").rglob("*.md")) if (root / "docs").is_dir() else []:
        text = page.read_text(encoding="utf-8")

        def quote(match: re.Match[str]) -> str:
            path = root / match["path"]
            if path.name in ("pyproject.toml", "__init__.py") and path.is_file():
                return match.group(1) + path.read_text(encoding="utf-8") + match.group(4)
            return match.group(0)

        new = DOC_BLOCK_RE.sub(quote, text)
        new = re.sub(rf"\(({names}) \d+\.\d+\.\d+\)", rf"(\1 {version})", new)
        if new != text:
            changed[page] = new
    return changed


def bump(root: Path, version: str) -> list[Path]:
    """Moves every place to ``version``; returns the files it changed."""
    parse_version(version)
    first_party = first_party_names(root)
    changed: dict[Path, str] = {}
    version_file = root / "VERSION"
    if not version_file.is_file() or version_file.read_text(encoding="utf-8").strip() != version:
        changed[version_file] = version + "\n"
    for path in pyprojects(root):
        text = path.read_text(encoding="utf-8")
        new = rewrite_pyproject(text, version, first_party)  # before anything is written: may refuse
        if new != text:
            changed[path] = new
    for path in init_files(root):
        text = path.read_text(encoding="utf-8")
        new = INIT_VERSION_RE.sub(f'__version__ = "{version}"', text, count=1)
        if new != text:
            changed[path] = new
    for path, text in changed.items():
        path.write_text(text, encoding="utf-8")
    docs = rewrite_docs(root, version, first_party)  # quotes the files as now written
    for path, text in docs.items():
        path.write_text(text, encoding="utf-8")
    return sorted([*changed, *docs])


def check(root: Path) -> list[str]:
    """One line per place that disagrees with VERSION (empty: all agree)."""
    version_file = root / "VERSION"
    if not version_file.is_file():
        return ["VERSION: missing"]
    version = version_file.read_text(encoding="utf-8").strip()
    try:
        parse_version(version)
    except ValueError as problem:
        return [f"VERSION: {problem}"]
    first_party = first_party_names(root)
    lines = []
    for path in pyprojects(root):
        where = path.relative_to(root).as_posix()
        lines += [f"{where}: {p}" for p in problems_of_pyproject(path.read_text(encoding="utf-8"), version, first_party)]
    for path in init_files(root):
        found = INIT_VERSION_RE.search(path.read_text(encoding="utf-8"))
        if found and found.group(1) != version:
            lines.append(f"{path.relative_to(root).as_posix()}: __version__ is {found.group(1)!r}, expected {version!r}")
    for page in rewrite_docs(root, version, first_party):
        lines.append(f"{page.relative_to(root).as_posix()}: a quoted pyproject.toml or __init__.py, or a shown "
                     f"version, differs from the files at {version}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("version", nargs="?", help="the new version, X.Y.Z")
    parser.add_argument("--check", action="store_true", help="exit 1, one line per place that disagrees with VERSION")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.check:
        if args.version:
            parser.error("--check takes no version")
        lines = check(root)
        for line in lines:
            print(line)
        return 1 if lines else 0
    if not args.version:
        print((root / "VERSION").read_text(encoding="utf-8").strip())
        return 0
    try:
        parse_version(args.version)
    except ValueError as problem:
        parser.error(str(problem))
    changed = bump(root, args.version)
    for path in changed:
        print(f"updated {path.relative_to(root).as_posix()}")
    print(f"version {args.version}; first-party pins {compatible_range(args.version)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
