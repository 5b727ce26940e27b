"""The core's layers, checked on its own sources (the lint session checks the same with
import-linter): each layer imports only from those below it, also through TYPE_CHECKING or
function-level imports, and no module takes part in an import circle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import abduct

PACKAGE = Path(abduct.__file__).parent
# bottom to top, as in .importlinter
LAYERS = ["contract", "_declare", "kit", "_stats", "_registry", "_engine", "_builtins", "_run", "_cli"]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        edges = graph.setdefault(_module_name(path), set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("abduct"):
                edges.add(node.module)
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name.startswith("abduct"))
    return graph


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_each_layer_imports_only_from_below() -> None:
    upward = [f"{source} -> {target}" for source, targets in import_graph().items() for target in targets
              if (low := layer_of(source)) is not None and (high := layer_of(target)) is not None and high > low]
    assert upward == []


def test_no_import_circles() -> None:
    graph = import_graph()
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt] if nxt in stack else [node, nxt]
            if nxt not in state and (found := visit(nxt, [*stack, nxt])):
                return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node, [node])):
            pytest.fail(" -> ".join(found))


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    crowded = {str(d.relative_to(PACKAGE)): n for d in [PACKAGE, *PACKAGE.rglob("*/")]
               if d.is_dir() and (n := len(list(d.glob("*.py")))) > 15}
    assert crowded == {}


def test_front_door_names_resolve_and_importing_it_stays_light() -> None:
    missing = [name for name in abduct.__all__ if getattr(abduct, name, None) is None]
    assert missing == []
    code = "import sys, abduct, abduct.kit; heavy = {'torch', 'scipy', 'abduct._run', 'abduct._engine', 'abduct._stats'} & set(sys.modules); print(sorted(heavy))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_python_dash_m_abduct_runs_the_command_line() -> None:
    done = subprocess.run([sys.executable, "-m", "abduct", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "Usage: abduct" in done.stdout, done.stderr
