"""What the import contracts of .importlinter cannot say, checked on the installed packages:
no import circle inside any package (function-level and TYPE_CHECKING imports included), no
import of another package's private module, and every import by name a declared dependency."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECTS = sorted([*ROOT.glob("packages/**/pyproject.toml"), *ROOT.glob("examples/*/pyproject.toml")])


def _distributions() -> dict[str, dict]:
    found = {}
    for path in PYPROJECTS:
        project = tomllib.loads(path.read_text())["project"]
        src = next((path.parent / "src").iterdir())
        found[src.name] = {"name": project["name"], "src": src, "project": project}
    return found


DISTRIBUTIONS = _distributions()
GRAPH = grimp.build_graph(*DISTRIBUTIONS)


def _cycle(package: str) -> list[str] | None:
    modules = sorted(m for m in GRAPH.modules if m == package or m.startswith(package + "."))
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(GRAPH.find_modules_directly_imported_by(node)):
            if not nxt.startswith(package):
                continue
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return None

    for module in modules:
        if module not in state and (found := visit(module)):
            return found
    return None


@pytest.mark.parametrize("package", sorted(DISTRIBUTIONS))
def test_no_import_circle(package: str) -> None:
    cycle = _cycle(package)
    assert cycle is None, " -> ".join(cycle or [])


def _is_private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split(".")[1:])


def test_no_package_imports_another_packages_private_modules() -> None:
    offending = []
    for module in sorted(GRAPH.modules):
        top = module.split(".")[0]
        for imported in GRAPH.find_modules_directly_imported_by(module):
            other = imported.split(".")[0]
            if other != top and other in DISTRIBUTIONS and _is_private(imported):
                offending.append(f"{module} -> {imported}")
    assert offending == []


BY_NAME = re.compile(r"""(?:import_module|require_module)\(\s*["'](abduct_[a-z0-9_]+)""")


def _declared(project: dict) -> set[str]:
    requirements = [*project.get("dependencies", []),
                    *(r for extra in project.get("optional-dependencies", {}).values() for r in extra)]
    return {re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower() for r in requirements}


def test_every_import_by_name_is_declared() -> None:
    missing = []
    for package, dist in DISTRIBUTIONS.items():
        declared = _declared(dist["project"])
        for path in dist["src"].rglob("*.py"):
            for other in set(BY_NAME.findall(path.read_text())) - {package}:
                if other in DISTRIBUTIONS and DISTRIBUTIONS[other]["name"] not in declared:
                    missing.append(f"{path.relative_to(ROOT)} imports {other} by name; "
                                   f"{dist['name']} does not declare {DISTRIBUTIONS[other]['name']}")
    assert missing == []
