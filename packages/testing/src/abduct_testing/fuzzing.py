"""Property-based fuzzing of the CLI's input files (hypothesis), reusable by every package.

One line in a package's tests holds a loader or an ``abduct score`` format to the project's
bar: whatever a file holds, the CLI answers with exit 0, 1 or 2; on 2 it prints one
``error:`` line; never a traceback; and an ``--out`` directory holds either all of a finished
run's files or none of them::

    from abduct_testing import fuzz_cli_input

    test_fuzz_val_file = fuzz_cli_input(
        write_data,                       # (directory) -> None: a valid dataset / inputs
        "val.json",                       # the file, relative to it, that is mutated
        lambda d: ["eval", "my-task", "--model", "random", "--data", str(d), "--out", str(d / "out")],
    )

``write_data`` runs once; each example rewrites only the target file (and empties ``out``),
so a test of 40 examples costs about 40 CLI calls. The mutations start from the valid
document: a value replaced by any JSON value (NaN and Infinity included), a key or item
removed, a key repeated, the text cut short, stray bytes inserted, the file emptied.
The other strategies and factories, each for one kind of input a package may add:
``fuzz_checkpoint_file`` (a checkpoint's config or settings mutated: loads or one line),
``mutated_json`` and ``mutated_text`` (the strategies underneath, for a package's own
fuzzers: abduct-vlm's HTTP replies, abduct-regions' feature records), ``declared_violations``
(each declared option's out-of-range values).
hypothesis is imported by the functions that use it. Each
factory's ``max_examples`` is the ``ci`` count: ``abduct_testing.profiles`` multiplies it under
``./dev test --thorough``.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import io
import json
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abduct_testing.profiles import examples

DATA_FILES = ("results.json", "predictions.jsonl", "units.json")  # every finished run's
PAGE_FILES = ("report.md", "report.html", "samples.html")  # abduct-report's, where it is installed
OUTPUT_FILES = DATA_FILES + PAGE_FILES


def renders_pages() -> bool:
    """Whether abduct-report, which renders a run's pages, is installed here."""
    return importlib.util.find_spec("abduct_report") is not None


@dataclass(frozen=True)
class CliOutcome:
    code: int
    out: str
    err: str
    crash: str | None = None  # the traceback of an exception that escaped the CLI


def run_cli(argv: list[str]) -> CliOutcome:
    """Run ``abduct ARGV`` in this process, capturing its output and any escaping exception."""
    from abduct.host import main

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
    """A finished run's data files must be all there (results.json last) or none of them, and
    so must its pages (written only where abduct-report is installed)."""
    if out_dir is None or not out_dir.is_dir():
        return None
    present = [name for name in OUTPUT_FILES if (out_dir / name).is_file()]
    data, pages = [n for n in present if n in DATA_FILES], [n for n in present if n in PAGE_FILES]
    if (present and len(data) != len(DATA_FILES)) or (pages and len(pages) != len(PAGE_FILES)):
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


HUGE_SIZES = (2**16, 10**8, 2**31, 2**63)  # sizes a hostile checkpoint config claims


def mutated_json(valid: Any, *, max_int: int = 2**64, sizes: Sequence[int] = ()) -> Any:
    """A hypothesis strategy of file contents (bytes) derived from the valid document ``valid``.
    ``max_int`` bounds the integers put in; ``sizes`` are drawn besides them on purpose (a
    checkpoint config's test gives ``HUGE_SIZES``)."""
    from hypothesis import strategies as st

    paths = list(_paths(valid))
    objects = [p for p in paths if _node(valid, p) and isinstance(_node(valid, p), dict)]
    integers = st.integers(-max_int, max_int) | st.sampled_from(list(sizes)) if sizes else st.integers(-max_int, max_int)
    scalars = st.one_of(st.none(), st.booleans(), integers,
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
            @settings(max_examples=examples(max_examples), deadline=None, database=None,
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


def fuzz_checkpoint_file(
    write_valid: Callable[[Path], Any],
    target: str,
    load: Callable[[Path], Any],
    *,
    max_examples: int = 15,
    max_int: int = 2**64,
    seed: int = 0,
) -> Callable[[], None]:
    """A pytest test: a checkpoint directory that ``write_valid(directory)`` writes, with its JSON
    file ``target`` (a config, settings, metadata) mutated (``mutated_json``), either loads
    through ``load(directory)`` or is refused by an ``AbductError`` of one line naming the
    directory. The valid checkpoint must load, and some mutation must be refused (a loader
    that checks nothing fails). Sizes up to ``max_int`` go in, huge by default: a loader checks
    a config's sizes against the stored weights (``abduct_modelkit.check_sizes_against_weights``)
    before it builds a network, so a claimed ``vocab_size`` of 10**8 is refused, not allocated."""

    def test() -> None:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as fixed_seed

        from abduct.contract import AbductError

        workdir = Path(tempfile.mkdtemp(prefix="abduct-fuzz-ckpt-"))
        try:
            write_valid(workdir)
            file = workdir / target
            load(workdir)  # the harness is sound
            refused: list[str] = []

            @fixed_seed(seed)
            @settings(max_examples=examples(max_examples), deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            @given(mutated_json(json.loads(file.read_text(encoding="utf-8")), max_int=max_int, sizes=HUGE_SIZES))
            def check(content: bytes) -> None:
                file.write_bytes(content)
                try:
                    load(workdir)
                except AbductError as exc:
                    message = str(exc)
                    assert "\n" not in message and str(workdir) in message, f"{target} = {content[:300]!r}: {message}"
                    refused.append(message)

            check()
            assert refused, f"no mutation of {target} was refused: the loader checks nothing"
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    test.__doc__ = f"a checkpoint with a mutated {target} loads or fails in one line naming it"
    return test


def _is_float(annotation: Any) -> bool:
    """``float`` or a union holding it (``float | None``)."""
    import types
    import typing

    if annotation is float:
        return True
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and float in typing.get_args(annotation)


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
    from abduct.contract import Decoding, NonFinite, Range
    from abduct.host import options_of

    factories: list[tuple[str, str, Callable[..., Any]]] = [("model", "decoding", Decoding)]
    for kind in kinds:
        for component in registry.components(kind):
            try:
                factories.append((kind, component.name, component.registration.load()))
            except Exception:  # noqa: S112 - a plugin that fails to load is the plugin tests' concern
                continue
    for kind, name, factory in factories:
        for option in options_of(factory).values():
            for extra in option.constraints:
                for bad in extra.outside() if isinstance(extra, Range) else []:
                    yield OptionViolation(kind, name, factory, option.name, f"{bad:g}")
        for option in options_of(factory).values():  # finite unless declared otherwise
            if _is_float(option.value_type) and not any(isinstance(e, NonFinite) for e in option.constraints):
                yield OptionViolation(kind, name, factory, option.name, "nan")



def finite_json_problem(text: str) -> str | None:
    """Why ``text`` is not strict JSON holding only finite numbers (what a cache may keep), or None."""
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} in the document")

    def finite(number: str) -> float:
        value = float(number)
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{number} overflows")
        return value

    try:
        json.loads(text, parse_constant=refuse, parse_float=finite)
    except ValueError as exc:
        return str(exc)
    return None
