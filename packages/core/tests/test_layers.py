"""The core's modules stand in layers: no import circle, also through TYPE_CHECKING or
function-level imports, so a reader can follow a run from the CLI downwards."""

from __future__ import annotations

import ast
from pathlib import Path

import abduct

PACKAGE = Path(abduct.__file__).parent


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        name = path.stem
        edges = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[0] == "abduct":
                    if len(parts) > 1:
                        edges.add(parts[1])
                    else:  # from abduct import x: a module or a name of __init__
                        edges.update(a.name if (PACKAGE / f"{a.name}.py").exists() else "__init__" for a in node.names)
            elif isinstance(node, ast.Import):
                edges.update(a.name.split(".")[1] for a in node.names if a.name.startswith("abduct."))
        edges.discard(name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_circles() -> None:
    graph = import_graph()
    graph.pop("__init__", None)  # the package's front door re-exports from below; nothing imports it back
    for edges in graph.values():
        edges.discard("__init__")
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_bottom_layers_import_nothing_above_them() -> None:
    graph = import_graph()
    assert graph["records"] == set() and graph["errors"] == set()
    assert graph["protocols"] <= {"records"}
    assert "runner" not in graph["engine"] and "runner" not in graph["protocols"]


def test_distributed_helpers_import_torch_only_when_called() -> None:
    import subprocess
    import sys

    code = "import sys, abduct.distributed as d; assert 'torch' not in sys.modules; print(d.seed_for(0, 1))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    from abduct.distributed import seed_for

    assert int(out) == seed_for(0, 1) and 0 <= seed_for(0, 1) < 2**63
    assert seed_for(0, 1) != seed_for(1, 0) and seed_for(3, 5, 7) == seed_for(3, 5, 7)
