"""The size of abduct-core's public surface, as issue-level gates measure it.

- ``names``: distinct public names over the core's public doors (``abduct``, ``abduct.contract``,
  ``abduct.host``, ``abduct.kit``), the union of their ``__all__``;
- ``contract_loc``: lines of code of ``abduct/contract/`` and of every core module it imports,
  transitively (blank lines, comments and docstrings not counted);
- ``core_lines``: raw lines of every module of abduct-core's ``src`` (a figure, not a gate).

Read from the source files, without importing anything: ``python tools/surface_report.py``.
"""

from __future__ import annotations

import ast
import io
import json
import sys
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "packages" / "core" / "src"
DOORS = ("abduct", "abduct.contract", "abduct.host", "abduct.kit")
CONTRACT = "abduct.contract"


def module_file(module: str, src: Path = SRC) -> Path | None:
    """The file of ``module`` under ``src`` (a package's ``__init__.py``), None when there is none."""
    base = src.joinpath(*module.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def exported(module: str, src: Path = SRC) -> list[str]:
    """The literal ``__all__`` of ``module``."""
    path = module_file(module, src)
    assert path is not None, module
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def code_lines(text: str) -> int:
    """Lines holding code: not blank, not only a comment, not part of a docstring (any bare string statement)."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            docstrings.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENCODING, tokenize.ENDMARKER}
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in skipped:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docstrings)


def _imports(path: Path, module: str) -> set[str]:
    """The ``abduct`` modules ``path`` (the file of ``module``) imports, anywhere in it."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return {name for name in found if name.split(".")[0] == "abduct" and module_file(name) is not None}


def closure(root: str, src: Path = SRC) -> list[Path]:
    """The files of ``root``'s package and of every core module they import, transitively."""
    start = module_file(root, src)
    assert start is not None, root
    todo = [(p, f"{root}." + ".".join(p.relative_to(start.parent).with_suffix("").parts).removesuffix(".__init__"))
            for p in sorted(start.parent.rglob("*.py"))]
    seen: dict[Path, str] = {}
    while todo:
        path, module = todo.pop()
        module = module.removesuffix(".")
        if path in seen:
            continue
        seen[path] = module
        for imported in _imports(path, module):
            if imported == "abduct":
                continue  # the package's own __init__ runs first, but the contract does not import it
            todo.append((module_file(imported, src), imported))  # type: ignore[arg-type]
    return sorted(seen)


def report(src: Path = SRC) -> dict[str, object]:
    names = set().union(*(exported(door, src) for door in DOORS))
    files = closure(CONTRACT, src)
    return {
        "names": len(names),
        "names_by_door": {door: len(exported(door, src)) for door in DOORS},
        "contract_loc": sum(code_lines(p.read_text()) for p in files),
        "contract_files": [str(p.relative_to(src)) for p in files],
        "core_lines": sum(len(p.read_text().splitlines()) for p in src.rglob("*.py")),
    }


if __name__ == "__main__":
    json.dump(report(), sys.stdout, indent=2)
    print()
