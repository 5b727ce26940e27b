"""Property-based fuzzing of the CLI's input files (hypothesis), reusable by every package.

One line in a package's tests holds a loader or an ``abduct score`` format to the project's
bar: whatever a file holds, the CLI answers with exit 0, 1 or 2; on 2 it prints one
``error:`` line; never a traceback; and an ``--out`` directory holds either all of a finished
run's files or none of them::

    from abduct.testing import fuzz_cli_input

    test_fuzz_val_file = fuzz_cli_input(
        write_data,                       # (directory) -> None: a valid dataset / inputs
        "val.json",                       # the file, relative to it, that is mutated
        lambda d: ["eval", "my-task", "--model", "random", "--data", str(d), "--out", str(d / "out")],
    )

``write_data`` runs once; each example rewrites only the target file (and empties ``out``),
so a test of 40 examples costs about 40 CLI calls. The mutations start from the valid
document: a value replaced by any JSON value (NaN and Infinity included), a key or item
removed, a key repeated, the text cut short, stray bytes inserted, the file emptied.
hypothesis is needed only by the tests that call this (a test extra, not a dependency).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OUTPUT_FILES = ("results.json", "predictions.jsonl", "report.md", "report.html")


@dataclass(frozen=True)
class CliOutcome:
    code: int
    out: str
    err: str
    crash: str | None = None  # the traceback of an exception that escaped the CLI


def run_cli(argv: list[str]) -> CliOutcome:
    """Run ``abduct ARGV`` in this process, capturing its output and any escaping exception."""
    from abduct._cli import main

    out, err = io.StringIO(), io.StringIO()
    crash = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # a command calling sys.exit: allowed, it is not a crash
            code = exc.code if isinstance(exc.code, int) else 1
        except Exception:  # what the user would see as a traceback
            code, crash = 1, traceback.format_exc()
    return CliOutcome(code, out.getvalue(), err.getvalue(), crash)


def clean_failure_problem(outcome: CliOutcome) -> str | None:
    """What is wrong with how the CLI ended, or None: a crash, an unexpected exit code, a
    traceback printed, or an exit 2 without exactly one ``error:`` line (click's own usage
    errors, which print usage first, are accepted)."""
    if outcome.crash is not None:
        return f"traceback:\n{outcome.crash}"
    if outcome.code not in (0, 1, 2):
        return f"exit code {outcome.code}"
    if "Traceback (most recent call last)" in outcome.err:
        return f"traceback printed:\n{outcome.err}"
    if outcome.code == 2:
        errors = [line for line in outcome.err.splitlines() if line.startswith(("error:", "Error:"))]
        if len(errors) != 1:
            return f"exit 2 without exactly one error line:\n{outcome.err}"
    return None


def half_written_problem(out_dir: Path | None) -> str | None:
    """A finished run's files must be all there (results.json last) or none of them."""
    if out_dir is None or not out_dir.is_dir():
        return None
    present = [name for name in OUTPUT_FILES if (out_dir / name).is_file()]
    if present and len(present) != len(OUTPUT_FILES):
        return f"{out_dir} holds only {present}"
    leftovers = [p.name for p in out_dir.glob(".*.tmp")]
    return f"{out_dir} holds temporary files {leftovers}" if leftovers else None


# -- mutations --------------------------------------------------------------------------------
Path_ = tuple[Any, ...]


def _paths(doc: Any, prefix: Path_ = (), limit: int = 400) -> Iterator[Path_]:
    """Paths to the document's nodes, breadth first, at most ``limit``."""
    queue: list[tuple[Path_, Any]] = [(prefix, doc)]
    count = 0
    while queue and count < limit:
        path, node = queue.pop(0)
        yield path
        count += 1
        if isinstance(node, dict):
            queue += [((*path, k), v) for k, v in node.items()]
        elif isinstance(node, list):
            queue += [((*path, i), v) for i, v in enumerate(node[:20])]


def _parent(doc: Any, path: Path_) -> Any:
    for step in path[:-1]:
        doc = doc[step]
    return doc


def _replace(doc: Any, path: Path_, value: Any) -> Any:
    if not path:
        return value
    _parent(doc, path)[path[-1]] = value
    return doc


def _delete(doc: Any, path: Path_) -> Any:
    if path:
        del _parent(doc, path)[path[-1]]
    return doc


def _with_duplicate_key(doc: Any, path: Path_) -> str:
    """The document's text with one key of the object at ``path`` written twice."""
    target = doc
    for step in path:
        target = target[step]
    marker = "\u0000duplicate\u0000"
    key = next(iter(target))
    inner = json.dumps(target)[1:-1]
    text = json.dumps(_replace(copy.deepcopy(doc), path, marker))
    return text.replace(json.dumps(marker), "{" + inner + ", " + json.dumps(key) + ": " + json.dumps(target[key]) + "}", 1)


def mutated_json(valid: Any) -> Any:
    """A hypothesis strategy of file contents (bytes) derived from the valid document ``valid``."""
    from hypothesis import strategies as st

    paths = list(_paths(valid))
    objects = [p for p in paths if _node(valid, p) and isinstance(_node(valid, p), dict)]
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64),
                        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                        st.sampled_from(["", "0", "-1", "1e999", "../../etc/passwd", "a" * 300]))
    values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)
    text = json.dumps(valid)

    @st.composite
    def mutate(draw: Any) -> bytes:
        kind = draw(st.sampled_from(["replace", "replace", "delete", "duplicate", "truncate", "bytes", "empty"]))
        if kind == "replace":
            return json.dumps(_replace(copy.deepcopy(valid), draw(st.sampled_from(paths)), draw(values))).encode()
        if kind == "delete" and len(paths) > 1:
            return json.dumps(_delete(copy.deepcopy(valid), draw(st.sampled_from(paths[1:])))).encode()
        if kind == "duplicate" and objects:
            return _with_duplicate_key(valid, draw(st.sampled_from(objects))).encode()
        if kind == "truncate":
            return text.encode()[: draw(st.integers(0, max(0, len(text) - 1)))]
        if kind == "bytes":
            at: int = draw(st.integers(0, len(text)))
            stray: bytes = draw(st.binary(min_size=1, max_size=8))
            return text.encode()[:at] + stray + text.encode()[at:]
        return b""

    return mutate()


def mutated_text(valid: str) -> Any:
    """A hypothesis strategy of file contents for a line-based file (CSV, TSV): a line removed
    or repeated, one comma-separated field replaced, the text cut short, stray bytes."""
    from hypothesis import strategies as st

    lines = valid.splitlines(keepends=True) or [""]
    fields = st.one_of(st.text(max_size=12), st.sampled_from(["", '"', "NaN", "-1", "1e999", "a,b", "\n"]))

    @st.composite
    def mutate(draw: Any) -> bytes:
        kind = draw(st.sampled_from(["field", "field", "drop", "repeat", "truncate", "bytes", "empty"]))
        at = draw(st.integers(0, len(lines) - 1))
        if kind == "field":
            cells = lines[at].rstrip("\r\n").split(",")
            cells[draw(st.integers(0, len(cells) - 1))] = draw(fields)
            changed = [*lines[:at], ",".join(cells) + "\n", *lines[at + 1 :]]
            return "".join(changed).encode("utf-8", "surrogatepass")
        if kind == "drop":
            return "".join(lines[:at] + lines[at + 1 :]).encode()
        if kind == "repeat":
            return "".join(lines[: at + 1] + lines[at:]).encode()
        if kind == "truncate":
            return valid.encode()[: draw(st.integers(0, max(0, len(valid.encode()) - 1)))]
        if kind == "bytes":
            cut: int = draw(st.integers(0, len(valid.encode())))
            stray: bytes = draw(st.binary(min_size=1, max_size=8))
            return valid.encode()[:cut] + stray + valid.encode()[cut:]
        return b""

    return mutate()


def mutations_of(original: bytes) -> Any:
    """JSON mutations for a JSON file, line mutations for any other text file."""
    try:
        return mutated_json(json.loads(original))
    except ValueError:
        return mutated_text(original.decode("utf-8-sig"))


def _node(doc: Any, path: Path_) -> Any:
    for step in path:
        doc = doc[step]
    return doc


# -- the test factory ---------------------------------------------------------------------------
def fuzz_cli_input(
    write_valid: Callable[[Path], Any],
    target: str,
    argv: Callable[[Path], list[str]],
    *,
    out: str | None = "out",
    max_examples: int = 40,
    seed: int = 0,
) -> Callable[[], None]:
    """A pytest test: ``abduct ARGV`` on mutations of ``target`` (a JSON or CSV file that
    ``write_valid(directory)`` writes, relative to that directory) ends cleanly every time.

    ``out`` names the run's ``--out`` directory relative to the data directory (None when the
    command writes none); it is emptied before each example and checked after it. The valid
    file itself must give exit 0, so a broken harness cannot pass unnoticed."""

    def test() -> None:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as fixed_seed

        workdir = Path(tempfile.mkdtemp(prefix="abduct-fuzz-"))
        try:
            write_valid(workdir)
            file = workdir / target
            original = file.read_bytes()
            out_dir = workdir / out if out is not None else None
            first = run_cli(argv(workdir))
            assert first.code == 0, f"the valid input must pass: {first.err or first.crash}"

            @fixed_seed(seed)
            @settings(max_examples=max_examples, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            @given(mutations_of(original))
            def check(content: bytes) -> None:
                if out_dir is not None:
                    shutil.rmtree(out_dir, ignore_errors=True)
                file.write_bytes(content)
                outcome = run_cli(argv(workdir))
                problem = clean_failure_problem(outcome) or half_written_problem(out_dir)
                assert problem is None, f"{target} = {content[:300]!r}: {problem}"

            check()
            file.write_bytes(original)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    test.__doc__ = f"abduct {' '.join(argv(Path('DATA')))} ends cleanly on mutations of {target}"
    return test


@dataclass(frozen=True)
class OptionViolation:
    """A value just outside one option's declared range: what ``bind_options`` must refuse."""

    kind: str
    name: str
    factory: Callable[..., Any]
    option: str
    value: str


def declared_violations(registry: Any, kinds: tuple[str, ...] = ("model", "task", "metric")) -> Iterator[OptionViolation]:
    """Every registered component's ranged options, each with the values just outside its range:
    tests generated from the declarations, so a new option is covered the day it is declared."""
    from abduct.contract.options import NonFinite, Range, constraints_of, is_float, options_of
    from abduct.contract.protocols import Decoding

    factories: list[tuple[str, str, Callable[..., Any]]] = [("model", "decoding", Decoding)]
    for kind in kinds:
        for component in registry.components(kind):
            try:
                factories.append((kind, component.name, component.registration.load()))
            except Exception:  # noqa: S112 - a plugin that fails to load is the plugin tests' concern
                continue
    for kind, name, factory in factories:
        for option in options_of(factory).values():
            for extra in constraints_of(option.annotation)[1]:
                for bad in extra.outside() if isinstance(extra, Range) else []:
                    yield OptionViolation(kind, name, factory, option.name, f"{bad:g}")
        for option in options_of(factory).values():  # finite unless declared otherwise
            inner, extras = constraints_of(option.annotation)
            if is_float(inner) and not any(isinstance(e, NonFinite) for e in extras):
                yield OptionViolation(kind, name, factory, option.name, "nan")

