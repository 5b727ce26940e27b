"""``abduct demo``: the whole workflow on a laptop CPU in a few minutes, assembled from the
sections the installed plugins register (hook ``register_demos``). The command comes with this
distribution, abduct-demo; the sections with the plugins (abduct-clip, abduct-t5, ...).

A section is a function ``section(ctx: DemoContext) -> DemoTable``: it makes or reuses a
synthetic corpus, trains what it trains, evaluates its models through ``ctx.evaluate`` and
returns one table. Sections are taken in name order (``sherlock-clip``, ``sherlock-t5``, ...)
and share what is expensive through ``ctx.shared`` (the Sherlock corpus is made once for every
section that uses it; a model evaluated on the same task and data by two sections, the random
baseline, runs once).

With ``jobs`` > 1 the sections run that many at a time, each in a worker process of its own
(spawned: nothing of the parent's torch state is inherited) on ``DEMO_THREADS`` torch threads,
so the digits are those of a run one section after another. ``ctx.shared`` then spans the
workers: the parent hands each value to every worker that asks, and the first to ask makes it
while the others wait. Each table comes back to the parent as its section finishes; an error
in a worker stops the others and is raised in the parent (an ``AbductError`` as the same
one-line error), and Ctrl-C stops them all.

Without ``--out`` everything is written to a temporary directory that is deleted at the end,
and the demo prints no path into it; with ``--out DIR`` the corpora, checkpoints and every
run's outputs are kept there.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import os
import pickle
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn, TypeVar

from abduct import AbductError, MetricInfo, Registration
from abduct.host import EvalConfig, Registry, build_registry, get_registry, reset_registry, run_evaluation
from abduct.kit import install_command

T = TypeVar("T")

# torch's CPU kernels split a reduction (a matmul's sum, a softmax) over the threads they have,
# and the rounding follows the split: with the machine's core count, the fine-tuned rows differ
# from one machine to the next. One thread makes the order the same everywhere; the demo's
# models are tiny, so it costs little (most of their training already ran on one thread).
DEMO_THREADS = 1


def default_jobs() -> int:
    """Sections run at once by default: two where there are two cores (each on one thread, so
    a second section uses the core the first leaves idle), one on a single core."""
    return max(1, min(2, os.cpu_count() or 1))


@contextlib.contextmanager
def own_cache(work: Path) -> Iterator[None]:
    """``$ABDUCT_CACHE_DIR`` inside ``work`` while the demo runs: caches that outlive a run
    (region features) would hand a second run what the first computed, in other batches, so
    its digits would depend on what ran before it on the machine."""
    before = os.environ.get("ABDUCT_CACHE_DIR")
    os.environ["ABDUCT_CACHE_DIR"] = str(work / "cache")
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ABDUCT_CACHE_DIR", None)
        else:
            os.environ["ABDUCT_CACHE_DIR"] = before


@contextlib.contextmanager
def deterministic_torch() -> Iterator[None]:
    """Inside: torch on ``DEMO_THREADS`` CPU threads, with deterministic kernels only; restored
    after. Nothing happens without torch (the core does not depend on it)."""
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
        yield
        return
    torch = importlib.import_module("torch")
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(DEMO_THREADS)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)


def require_module(module: str, distribution: str, purpose: str) -> ModuleType:
    """``module`` imported by name (the caller does not depend on ``distribution``); a one-line
    error saying what to install otherwise."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise AbductError(f"{purpose}: {install_command(distribution)}") from None


def _cell(value: float | None) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.2f}"  # counts stay whole numbers


def _numeric(metrics: dict[str, Any]) -> dict[str, float]:
    return {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _cpu_seconds() -> float:
    """CPU time of this process and of its children that ended (a training's loader workers)."""
    try:
        import resource
    except ImportError:  # no getrusage (Windows): this process only
        return time.process_time()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class DemoTable:
    """One section's result: ``rows[label][task][metric]``, shown as the ``columns``
    (``(task, metric)`` pairs) in that order, with a note under the table. ``arrows`` holds
    each column's ↑ / ↓ (filled by ``run_demo`` from the runs' ``metric_info``)."""

    title: str
    columns: list[tuple[str, str]]
    rows: dict[str, dict[str, dict[str, float]]]
    note: str = ""
    arrows: dict[tuple[str, str], str] = field(default_factory=dict)

    def format(self) -> str:
        header = ["model"] + [f"{_short(task)}.{metric}{' ' + self.arrows[(task, metric)] if self.arrows.get((task, metric)) else ''}"
                              for task, metric in self.columns]
        lines = [header]
        for label, results in self.rows.items():
            cells = [results.get(task, {}).get(metric) for task, metric in self.columns]
            lines.append([label] + [_cell(value) for value in cells])
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        text = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(line, widths)))
                for line in lines]
        text.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join([self.title, *text, *([self.note] if self.note else [])])


def _arrow(metric_info: dict[str, Any], metric: str) -> str:
    """↑ / ↓ for ``metric`` from a run's ``metric_info`` block ("" when unknown or a count)."""
    entry = metric_info.get(metric)
    better = entry.get("better") if isinstance(entry, dict) else None
    return MetricInfo(better).arrow if better in ("higher", "lower") else ""


def _short(task: str) -> str:
    """``sherlock-retrieval`` -> ``retr``: the part after the benchmark's name, cut to 4 letters."""
    return task.partition("-")[2][:4] or task[:4]


class _Parent:
    """A worker's line to the parent, for ``DemoContext.shared`` across workers."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def claim(self, key: str) -> tuple[bool, Any]:
        """``(True, value)`` when a worker made ``key`` (waiting while one makes it), else
        ``(False, None)``: this worker makes it and publishes it."""
        self.conn.send(("claim", key))
        reply = self.conn.recv()
        return (True, reply[1]) if reply[0] == "value" else (False, None)

    def publish(self, key: str, value: Any) -> None:
        self.conn.send(("publish", key, value))


@dataclass
class DemoContext:
    """What a section gets: where to write, the user's settings, and shared helpers."""

    work: Path
    seed: int = 0
    quiet: bool = False
    steps: int | None = None
    images: int | None = None
    metric_info: dict[str, dict[str, Any]] = field(default_factory=dict)  # task -> results.json's block
    section: str | None = None  # the section running (named in front of each message)
    _shared: dict[str, Any] = field(default_factory=dict, repr=False)
    _parent: _Parent | None = field(default=None, repr=False)  # set in a worker process

    def dir(self, name: str) -> Path:
        path = self.work / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def say(self, message: str) -> None:
        if not self.quiet:
            where = f"{self.section}: " if self.section else ""
            print(f"[demo] {where}{message}", file=sys.stderr, flush=True)

    def shared(self, key: str, make: Callable[[], T]) -> T:
        """``make()`` once per demo, whichever section asks first (in whichever worker: the
        value must then pickle, as a path does)."""
        if key not in self._shared:
            found, value = self._parent.claim(key) if self._parent is not None else (False, None)
            if not found:
                value = make()
                if self._parent is not None:
                    self._parent.publish(key, value)
            self._shared[key] = value
        shared: T = self._shared[key]
        return shared

    def evaluate(self, models: dict[str, str], tasks: Sequence[str], data_dir: Path, *,
                 section: str) -> dict[str, dict[str, dict[str, float]]]:
        """``{label: {task: metrics}}`` for every model spec and task, each run kept under
        ``<work>/<section>/eval/<label>/<task>``. A spec evaluated on the same task and data by
        an earlier section (the random baseline) is not run again: the same seed gives the same
        digits, and its run stays where it first ran."""
        table: dict[str, dict[str, dict[str, float]]] = {}
        for label, spec in models.items():
            table[label] = {}
            for task in tasks:
                key = f"evaluate\0{spec}\0{task}\0{Path(data_dir).resolve()}\0{self.seed}"
                metrics, info = self.shared(key, functools.partial(self._run, label, spec, task, data_dir, section))
                table[label][task] = metrics
                self.metric_info.setdefault(task, {}).update(info)
        return table

    def _run(self, label: str, spec: str, task: str, data_dir: Path,
             section: str) -> tuple[dict[str, float], dict[str, Any]]:
        started = time.perf_counter()
        out = self.work / section / "eval" / label / task
        config = EvalConfig(task=task, model=spec, data_dir=data_dir, out_dir=out, seed=self.seed,
                            quiet=True, use_cache=False)
        results = run_evaluation(config)
        where = "" if section == self.section else f"{section}: "
        self.say(f"{where}{label:<14} {task:<22} {time.perf_counter() - started:5.1f}s")
        return _numeric(results["metrics"]), dict(results.get("metric_info", {}))


Section = Callable[[DemoContext], DemoTable]


def _components(registry: Registry | None, only: Sequence[str]) -> list[Registration]:
    components = [c.registration for c in (registry or get_registry()).components("demo")]
    names = [c.name for c in components]
    unknown = [name for name in only if name not in names]
    if unknown:
        raise AbductError(f"no demo section {', '.join(map(repr, unknown))}; installed: {', '.join(names) or 'none'}")
    chosen = [c for c in components if not only or c.name in only]
    if not chosen:
        raise AbductError(f"no demo section is installed: {install_command('abduct-clip', 'abduct-sherlock')}")
    return chosen


def sections(registry: Registry | None = None, only: Sequence[str] = ()) -> list[tuple[str, Section]]:
    """The installed sections in name order (only those named in ``only``, when given)."""
    return [(c.name, c.load()) for c in _components(registry, only)]


def _run_section(ctx: DemoContext, name: str, section: Section) -> DemoTable:
    """One section, its columns' arrows filled, its time said."""
    started, cpu = time.perf_counter(), _cpu_seconds()
    ctx.section = name
    try:
        table = section(ctx)
        for task, metric in table.columns:
            table.arrows.setdefault((task, metric), _arrow(ctx.metric_info.get(task, {}), metric))
        ctx.say(f"done in {time.perf_counter() - started:.0f}s (CPU {_cpu_seconds() - cpu:.0f}s)")
    finally:
        ctx.section = None
    return table


def run_demo(*, out_dir: Path | None, seed: int = 0, quiet: bool = False, steps: int | None = None,
             images: int | None = None, only: Sequence[str] = (), registry: Registry | None = None,
             jobs: int = 1, on_table: Callable[[str, DemoTable], None] | None = None) -> dict[str, DemoTable]:
    """Run the sections into ``out_dir`` (a temporary directory, deleted, when None), ``jobs``
    at a time; ``on_table(name, table)`` as each finishes. The tables, in name order.

    With ``jobs`` > 1 the workers are spawned, so a script calling this needs the usual
    ``if __name__ == "__main__":`` guard (``abduct demo`` and ``python -m abduct`` have it)."""
    chosen = _components(registry, only)
    extras = _portable_plugins(registry or get_registry()) if jobs > 1 and len(chosen) > 1 else None
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="abduct-demo-"))
        work = out_dir if out_dir is not None else Path(scratch)
        stack.enter_context(own_cache(work))
        settings: dict[str, Any] = {"work": work, "seed": seed, "quiet": quiet, "steps": steps, "images": images}
        tables: dict[str, DemoTable] = {}
        if extras is not None:
            tables = _run_in_workers([c.name for c in chosen], settings, extras, min(jobs, len(chosen)), on_table)
        else:
            stack.enter_context(deterministic_torch())
            ctx = DemoContext(**settings)
            for component in chosen:
                tables[component.name] = _run_section(ctx, component.name, component.load())
                if on_table is not None:
                    on_table(component.name, tables[component.name])
    if not quiet:
        print(f"[demo] all done in {time.perf_counter() - started:.0f}s", file=sys.stderr, flush=True)
    return {c.name: tables[c.name] for c in chosen}


# -- sections in worker processes ------------------------------------------------------------------
def _portable_plugins(registry: Registry) -> list[tuple[str, object]] | None:
    """The plugins a worker cannot find by itself (those added to the registry by hand, as the
    tests add theirs), when they pickle; None when one does not (the sections then run here)."""
    extras: list[tuple[str, object]] = []
    for info in registry.plugins:
        if info.distribution is not None or info.error is not None:  # the core's plugin has one: abduct-core
            continue
        plugin = registry.manager.get_plugin(info.name)
        try:
            pickle.dumps(plugin)
        except Exception:
            return None
        extras.append((info.name, plugin))
    return extras


def _portable_showwarning() -> Any:
    """How this process shows warnings (the CLI: one line each), for the workers to show theirs
    the same way; None when it does not pickle (a closure)."""
    try:
        pickle.dumps(warnings.showwarning)
    except Exception:
        return None
    return warnings.showwarning


@dataclass
class _Worker:
    process: Any
    conn: Any
    section: str | None = None
    done: bool = False


def _run_in_workers(names: list[str], settings: dict[str, Any], extras: list[tuple[str, object]], jobs: int,
                    on_table: Callable[[str, DemoTable], None] | None) -> dict[str, DemoTable]:
    import multiprocessing
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("spawn")
    # a spawned process starts its own processes by spawning too; the sections' data loaders
    # get this process's start method back (fork on Linux: a loader worker in a few
    # milliseconds, not seconds of importing torch again for every evaluation)
    settings = {**settings, "start_method": multiprocessing.get_start_method(), "showwarning": _portable_showwarning()}
    pending = list(names)
    tables: dict[str, DemoTable] = {}
    shared: dict[str, Any] = {}
    making: dict[str, list[_Worker]] = {}  # key -> workers waiting for it
    workers: list[_Worker] = []
    try:
        for _ in range(jobs):
            mine, theirs = context.Pipe()
            process = context.Process(target=_worker_main, args=(theirs, settings, extras), name="abduct-demo")
            process.start()
            theirs.close()
            workers.append(_Worker(process, mine))
        while not all(w.done for w in workers):
            live = [w for w in workers if not w.done]
            ready = wait([w.conn for w in live] + [w.process.sentinel for w in live])
            for worker in live:
                if worker.conn not in ready and worker.process.sentinel not in ready:
                    continue
                try:
                    message = worker.conn.recv()
                except (EOFError, OSError):
                    worker.process.join()
                    raise RuntimeError(f"demo section {worker.section or '(starting)'}: its worker process ended "
                                       f"(exit code {worker.process.exitcode})") from None
                kind = message[0]
                if kind == "ready":
                    worker.section = pending.pop(0) if pending else None
                    worker.conn.send(("run", worker.section) if worker.section else ("stop",))
                    worker.done = worker.section is None
                elif kind == "claim":
                    key = message[1]
                    if key in shared:
                        worker.conn.send(("value", shared[key]))
                    elif key in making:
                        making[key].append(worker)
                    else:
                        making[key] = []
                        worker.conn.send(("make",))
                elif kind == "publish":
                    key, shared[key] = message[1], message[2]
                    for waiting in making.pop(key, []):
                        waiting.conn.send(("value", shared[key]))
                elif kind == "done":
                    tables[message[1]] = message[2]
                    if on_table is not None:
                        on_table(message[1], message[2])
                elif kind == "failed":
                    _raise_failure(message[1], message[2], message[3])
        for worker in workers:
            worker.process.join()
    finally:
        _stop(workers)
    return tables


def _raise_failure(name: str, kind: str, payload: Any) -> NoReturn:
    if kind == "error":
        raise AbductError(payload)
    if kind == "oserror":
        raise OSError(*payload)
    raise RuntimeError(f"demo section {name} failed in its worker process:\n{payload}")


def _stop(workers: list[_Worker]) -> None:
    """Every worker still running, stopped (SIGTERM: it unwinds, its loader workers with it)."""
    for worker in workers:
        if worker.process.is_alive():
            worker.process.terminate()
    for worker in workers:
        worker.process.join(10)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.conn.close()


def _exit_on_term(signum: int, frame: Any) -> None:
    raise SystemExit(1)


def _watch_parent(parent: int) -> None:
    """End this worker when the parent is gone (killed without a chance to stop it)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def _worker_main(conn: Any, settings: dict[str, Any], extras: list[tuple[str, object]]) -> None:
    """A worker process: sections by name from the parent, their tables back to it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which stops the workers
    signal.signal(signal.SIGTERM, _exit_on_term)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    with contextlib.suppress(AttributeError, OSError, ValueError):  # no stdout to guard (pythonw)
        sys.stdout.flush()
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stdout is the parent's: the tables, or one JSON document
    try:
        import multiprocessing

        settings = dict(settings)
        multiprocessing.set_start_method(settings.pop("start_method"), force=True)
        showwarning = settings.pop("showwarning")
        if showwarning is not None:  # warnings as the command shows them (one line each)
            warnings.showwarning = showwarning
        reset_registry(build_registry(extra_plugins=extras))
        with own_cache(settings["work"]), deterministic_torch():
            ctx = DemoContext(**settings, _parent=_Parent(conn))
            while True:
                conn.send(("ready",))
                order = conn.recv()
                if order[0] != "run":
                    return
                name = order[1]
                try:
                    table = _run_section(ctx, name, sections(None, [name])[0][1])
                except AbductError as exc:
                    conn.send(("failed", name, "error", str(exc)))
                    return
                except OSError as exc:
                    conn.send(("failed", name, "oserror", (exc.errno, exc.strerror, exc.filename)))
                    return
                except Exception:
                    conn.send(("failed", name, "crash", traceback.format_exc()))
                    return
                conn.send(("done", name, table))
    except (SystemExit, EOFError, BrokenPipeError):  # stopped by the parent, or the parent is gone
        return


def write_overview(out_dir: Path, registry: Registry | None = None) -> Path | None:
    """``out_dir/report.html``: every run the demo kept, side by side with the papers' rows
    (``abduct compare`` over them); None when no run finished. Every corpus of the demo is
    synthetic: the page says that no paper row is comparable and draws none beside the runs."""
    from abduct.kit import atomic_write_text
    from abduct_report import compare, html_page

    runs = sorted(path.parent for path in out_dir.rglob("results.json"))
    if not runs:
        return None
    # runs sit in <section>/eval/<label>/<task>: name each by its label and section, not by its
    # spec (which holds the checkpoint's path)
    labels = {run: f"{run.parent.name} ({run.parents[2].name})" if len(run.relative_to(out_dir).parts) >= 4
              else run.relative_to(out_dir).as_posix() for run in runs}
    page = out_dir / "report.html"
    title = "abduct demo: every run beside the papers' rows"
    synthetic = {run: {"data": "synthetic"} for run in runs}
    comparison = compare(runs, registry, labels=labels, conditions=synthetic)
    atomic_write_text(page, html_page(comparison, title=title, where=out_dir))
    return page
