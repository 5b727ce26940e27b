"""``abduct demo``: the whole workflow on a laptop CPU in a few minutes, assembled from the
sections the installed plugins register (hook ``register_demos``).

A section is a function ``section(ctx: DemoContext) -> DemoTable``: it makes or reuses a
synthetic corpus, trains what it trains, evaluates its models through ``ctx.evaluate`` and
returns one table. Sections run in name order (``sherlock-clip``, ``sherlock-t5``, ...), so
related ones sit together, and share what is expensive through ``ctx.shared`` (the Sherlock
corpus is made once for every section that uses it).

Without ``--out`` everything is written to a temporary directory that is deleted at the end,
and the demo prints no path into it; with ``--out DIR`` the corpora, checkpoints and every
run's outputs are kept there.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from abduct._registry.registry import Registry, get_registry
from abduct.contract.errors import AbductError
from abduct.contract.metric_info import arrow_of

T = TypeVar("T")

# torch's CPU kernels split a reduction (a matmul's sum, a softmax) over the threads they have,
# and the rounding follows the split: with the machine's core count, the fine-tuned rows differ
# from one machine to the next. One thread makes the order the same everywhere; the demo's
# models are tiny, so it costs little (most of their training already ran on one thread).
DEMO_THREADS = 1


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
        raise AbductError(f"{purpose}: pip install {distribution}") from None


def _cell(value: float | None) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.2f}"  # counts stay whole numbers


def _numeric(metrics: dict[str, Any]) -> dict[str, float]:
    return {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


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


def _short(task: str) -> str:
    """``sherlock-retrieval`` -> ``retr``: the part after the benchmark's name, cut to 4 letters."""
    return task.partition("-")[2][:4] or task[:4]


@dataclass
class DemoContext:
    """What a section gets: where to write, the user's settings, and shared helpers."""

    work: Path
    seed: int = 0
    quiet: bool = False
    steps: int | None = None
    images: int | None = None
    metric_info: dict[str, dict[str, Any]] = field(default_factory=dict)  # task -> results.json's block
    _shared: dict[str, Any] = field(default_factory=dict, repr=False)

    def dir(self, name: str) -> Path:
        path = self.work / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def say(self, message: str) -> None:
        if not self.quiet:
            print(f"[demo] {message}", file=sys.stderr, flush=True)

    def shared(self, key: str, make: Callable[[], T]) -> T:
        """``make()`` once per demo, whichever section asks first."""
        if key not in self._shared:
            self._shared[key] = make()
        value: T = self._shared[key]
        return value

    def evaluate(self, models: dict[str, str], tasks: Sequence[str], data_dir: Path, *,
                 section: str) -> dict[str, dict[str, dict[str, float]]]:
        """``{label: {task: metrics}}`` for every model spec and task, each run kept under
        ``<work>/<section>/eval/<label>/<task>``."""
        from abduct._run.evaluate import EvalConfig, run_evaluation

        table: dict[str, dict[str, dict[str, float]]] = {}
        for label, spec in models.items():
            table[label] = {}
            for task in tasks:
                started = time.perf_counter()
                out = self.work / section / "eval" / label / task
                config = EvalConfig(task=task, model=spec, data_dir=data_dir, out_dir=out, seed=self.seed,
                                    quiet=True, use_cache=False)
                results = run_evaluation(config)
                table[label][task] = _numeric(results["metrics"])
                self.metric_info.setdefault(task, {}).update(results.get("metric_info", {}))
                self.say(f"{section}: {label:<14} {task:<22} {time.perf_counter() - started:5.1f}s")
        return table


Section = Callable[[DemoContext], DemoTable]


def sections(registry: Registry | None = None, only: Sequence[str] = ()) -> list[tuple[str, Section]]:
    """The installed sections in name order (only those named in ``only``, when given)."""
    components = (registry or get_registry()).components("demo")
    names = [c.name for c in components]
    unknown = [name for name in only if name not in names]
    if unknown:
        raise AbductError(f"no demo section {', '.join(map(repr, unknown))}; installed: {', '.join(names) or 'none'}")
    chosen = [c for c in components if not only or c.name in only]
    if not chosen:
        raise AbductError("no demo section is installed: pip install abduct-clip abduct-sherlock")
    return [(c.name, c.registration.load()) for c in chosen]


def run_demo(*, out_dir: Path | None, seed: int = 0, quiet: bool = False, steps: int | None = None,
             images: int | None = None, only: Sequence[str] = (),
             registry: Registry | None = None) -> dict[str, DemoTable]:
    """Run the sections into ``out_dir`` (a temporary directory, deleted, when None)."""
    chosen = sections(registry, only)
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="abduct-demo-"))
        work = out_dir if out_dir is not None else Path(scratch)
        stack.enter_context(own_cache(work))
        stack.enter_context(deterministic_torch())
        ctx = DemoContext(work=work, seed=seed, quiet=quiet, steps=steps, images=images)
        tables: dict[str, DemoTable] = {}
        for name, section in chosen:
            section_started = time.perf_counter()
            table = tables[name] = section(ctx)
            for task, metric in table.columns:
                table.arrows.setdefault((task, metric), arrow_of(ctx.metric_info.get(task, {}), metric))
            ctx.say(f"{name} done in {time.perf_counter() - section_started:.0f}s")
    ctx.say(f"all done in {time.perf_counter() - started:.0f}s")
    return tables


def write_overview(out_dir: Path, registry: Registry | None = None) -> Path | None:
    """``out_dir/report.html``: every run the demo kept, side by side with the papers' rows
    (``abduct compare`` over them); None when no run finished."""
    from abduct._outputs.compare import compare, html_page
    from abduct.kit.io import atomic_write_text

    runs = sorted(path.parent for path in out_dir.rglob("results.json"))
    if not runs:
        return None
    # runs sit in <section>/eval/<label>/<task>: name each by its label and section, not by its
    # spec (which holds the checkpoint's path)
    labels = {run: f"{run.parent.name} ({run.parents[2].name})" if len(run.relative_to(out_dir).parts) >= 4
              else run.relative_to(out_dir).as_posix() for run in runs}
    page = out_dir / "report.html"
    title = "abduct demo: every run beside the papers' rows"
    atomic_write_text(page, html_page(compare(runs, registry, labels=labels), title=title, where=out_dir))
    return page
