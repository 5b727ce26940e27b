"""``abduct compare RUN_DIR...``: finished runs side by side (models x tasks), beside the
papers' published rows, with the differences marked.

Published rows come from the plugins' ``register_published`` hook (``abduct.PublishedRow``;
a package ships them as ``published.json``, see ``abduct.kit.read_published``).

Differences: each run's value is compared with the first run's on the same task and metric
(its ``Δ``), green when better and red when worse by the metric's direction (``metric_info``
in results.json; a metric without one is shown unmarked). With per-unit data (units.json),
each run after the first is also tested against it, paired on the units both scored
(``paired.py``): the difference's interval and p-values, ``*`` where Holm's p < 0.05.

Headline metrics and breakdowns (``paired.family_of``, the rule until tasks declare their
headline metrics): a metric whose flattened name has a ``by_<field>.`` or ``per_<name>.``
component is a breakdown cell, a count or reference figure (no direction) is neither, every
other metric is a headline metric. The headline metrics are one Holm family and the first
table; each breakdown is a family of its own, shown on request (text: ``--breakdowns``;
HTML: collapsed under the headline table) with each cell's n and interval. The text never
exceeds ``WIDTH`` (100) columns; the HTML tables scroll inside their box rather than widen the
page. Runs that differ only in ``--seed`` are named ``SPEC (seed N)`` and get mean ± standard
deviation, counts shown as they are. Paper rows have no per-unit data and are never tested.
A run is named by results.json's ``model.label`` (``abduct eval --label``; by default the spec
without URL-valued options); runs of a task whose recorded preprocessing differs from the first's
get one "not like for like" line per fact (``conditions.unlike_notes``).
"""

from __future__ import annotations

import html
import os
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.host import Registry, get_registry
from abduct.kit import RESAMPLE_COUNT, read_json
from abduct_report.conditions import (
    chart_papers,
    distinct_names,
    fitted_names,
    not_comparable_notes,
    run_conditions,
    run_label,
    shown_conditions,
    unlike_notes,
)
from abduct_report.judge_agreement import across_runs_html, across_runs_lines
from abduct_report.judge_agreement import compare_html as judge_agreement_html
from abduct_report.judge_agreement import compare_rows as judge_agreement_rows
from abduct_report.markdown import flatten_metrics
from abduct_report.paired import ALPHA, HEADLINE, breakdown_of, family_of, is_count, seed_groups, test_units
from abduct_report.paired import versus as paired_versus
from abduct_report.parity import parity_lines
from abduct_report.report_page import bars, figure_html, have_matplotlib, page
from abduct_report.samples import disagreement, readable, samples_page


@dataclass
class Row:
    """One line of the comparison: a run (``run`` set) or a published row (``citation`` set)."""

    model: str
    task: str
    metrics: dict[str, float]
    split: str | None = None
    run: Path | None = None
    citation: str | None = None
    source: str | None = None
    setting: str | None = None
    std: dict[str, float] = field(default_factory=dict)
    directions: dict[str, str] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    versus: dict[str, Any] | None = None
    label: str | None = None  # what pages call the run (the demo's "fine_tuned"); default: its recorded label
    conditions: dict[str, Any] = field(default_factory=dict)  # data, candidates (``conditions.py``)

    @property
    def name(self) -> str:
        """The caller's label, else results.json's (``--label``, or the spec without URLs), paths cut."""
        return self.label or readable(run_label(self.results) or self.model)

    @property
    def intervals(self) -> dict[str, Any]:
        return dict(self.results.get("intervals") or {})


def rates_models(row: Row, metric: str) -> bool:
    """Whether ``metric`` rates the model: counts (chunks, instances) and reference figures
    (declared with no direction) get no bars and no Δ; a metric nobody declared does, unless
    its name says it is a size."""
    return not is_count(metric, row.results.get("metric_info"))


def load_run(directory: Path) -> Row:
    """A finished run's row; an unfinished or foreign directory is a one-line error."""
    results_file = Path(directory) / "results.json"
    if not results_file.is_file():
        raise AbductError(f"{directory} holds no finished run (no results.json)")
    results = read_json(results_file, "results file")
    try:
        metrics = {name: float(value) for name, value in flatten_metrics(results["metrics"])
                   if isinstance(value, (int, float)) and not isinstance(value, bool)}
        info = results.get("metric_info") or {}
        directions = {m: str(v.get("better")) for m, v in info.items() if isinstance(v, dict) and v.get("better")}
        return Row(str(results["model"]["spec"]), str(results["task"]), metrics, str(results.get("split")),
                   run=Path(directory), directions=directions, results=results, conditions=run_conditions(results))
    except (KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"not an abduct results file (missing {exc})", file=results_file) from None


def published_rows(task: str, registry: Registry) -> list[Row]:
    """The papers' rows for ``task``, from the plugins' ``register_published`` hooks."""
    return [Row(r.model, r.task, dict(r.metrics), r.split, citation=r.citation, source=r.source,
                setting=r.setting, std=dict(r.std), conditions=dict(r.conditions))
            for r in registry.published() if r.task == task]


@dataclass
class Comparison:
    runs: list[Row]
    published: list[Row]
    seeds: list[dict[str, Any]] = field(default_factory=list)

    @property
    def tasks(self) -> list[str]:
        return list(dict.fromkeys(r.task for r in self.runs))

    def columns(self, task: str) -> list[str]:
        """The task's metrics, in the order the first run reports them."""
        names: dict[str, None] = {}
        for row in self.runs:
            if row.task == task:
                names.update(dict.fromkeys(row.metrics))
        return list(names)

    def baseline(self, task: str) -> Row:
        return next(r for r in self.runs if r.task == task)

    def task_runs(self, task: str) -> list[Row]:
        return [r for r in self.runs if r.task == task]

    def task_papers(self, task: str) -> list[Row]:
        return [p for p in self.published if p.task == task]

    def task_seeds(self, task: str) -> list[dict[str, Any]]:
        return [g for g in self.seeds if g["task"] == task]

    def metric_info(self, task: str) -> dict[str, Any]:
        """The task's ``metric_info``, the first run's declaration first."""
        info: dict[str, Any] = {}
        for row in reversed(self.task_runs(task)):
            info.update(row.results.get("metric_info") or {})
        return info

    def headline(self, task: str) -> list[str]:
        """The task's headline metrics: one Holm family, the first table (``paired.family_of``)."""
        info = self.metric_info(task)
        return [m for m in self.columns(task) if family_of(m, info) == HEADLINE]

    def counts(self, task: str) -> list[str]:
        """Counts and reference figures outside the breakdowns (``n``, ``chunks``): shown, not tested."""
        info = self.metric_info(task)
        return [m for m in self.columns(task) if breakdown_of(m) is None and is_count(m, info)]

    def breakdowns(self, task: str) -> dict[str, list[str]]:
        """``{breakdown: [its cells' metrics]}`` (``by_category``, ``per_chunk``), in the runs' order."""
        out: dict[str, list[str]] = {}
        for metric in self.columns(task):
            if (found := breakdown_of(metric)) is not None:
                out.setdefault(found[0], []).append(metric)
        return out


def compare(directories: Sequence[Path], registry: Registry | None = None, published: bool = True,
            resamples: int = RESAMPLE_COUNT.default, seed: int = 0, labels: Mapping[Path, str] | None = None,
            conditions: Mapping[Path, Mapping[str, Any]] | None = None) -> Comparison:
    """The runs, the papers' rows for their tasks, each later run's paired test against the first
    run of its task (``resamples`` 0: none) and the seed groups; ``labels`` names runs by directory,
    ``conditions`` adds what the caller knows of a run's (``{"data": "synthetic"}``: the demo's)."""
    runs = [load_run(Path(d)) for d in directories]
    for row in runs:
        row.label = (labels or {}).get(Path(row.run or ""))
        row.conditions.update((conditions or {}).get(Path(row.run or ""), {}))
    registry = registry or get_registry()
    rows = [p for task in dict.fromkeys(r.task for r in runs) for p in published_rows(task, registry)] if published else []
    comparison = Comparison(runs, rows)
    for task in comparison.tasks:
        base = comparison.baseline(task)
        for row in [r for r in runs if r.task == task and r is not base]:
            if resamples > 0 and row.run is not None and base.run is not None:
                row.versus = paired_versus(base.run, base.results, row.run, row.results, resamples, seed)
    comparison.seeds = seed_groups([(r.run, r.results, r.metrics) for r in runs if r.run is not None])
    by_dir = {str(r.run): r for r in runs}
    for group in comparison.seeds:  # "random (seed 0)", "random (seed 5)": not "random" twice
        for directory, seed_value in zip(group["dirs"], group["seeds"]):
            row = by_dir[directory]
            if row.label is None:
                row.label = f"{readable(run_label(row.results) or row.model)} (seed {seed_value})"
    return comparison


def significant(test: dict[str, Any] | None) -> bool:
    return test is not None and float(test["p_holm"]) < ALPHA


def _test_of(row: Row, metric: str) -> dict[str, Any] | None:
    found = ((row.versus or {}).get("metrics") or {}).get(metric)
    return found if isinstance(found, dict) else None


def _delta(row: Row, base: Row, metric: str) -> tuple[float | None, str]:
    """(difference from the baseline run, "better" / "worse" / "")."""
    if row is base or metric not in row.metrics or metric not in base.metrics or not rates_models(base, metric):
        return None, ""
    diff = row.metrics[metric] - base.metrics[metric]
    better = base.directions.get(metric) or row.directions.get(metric)
    if diff == 0 or better not in ("higher", "lower"):
        return diff, ""
    return diff, "better" if (diff > 0) == (better == "higher") else "worse"


# -- plain text: never wider than WIDTH columns ------------------------------------------------
WIDTH = 100


def shorten(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: the middle cut out for an ellipsis, so both the
    kind of model (``clip:``) and its file (``best.pt``) stay."""
    if len(text) <= width:
        return text
    if width < 2:
        return "…"[:width]
    tail = (width - 1) // 2
    return text[: width - 1 - tail] + "…" + (text[-tail:] if tail else "")


def number(value: float) -> str:
    """Four significant digits for the terminal, no exponent between 1e-4 and 1e15."""
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    if abs(value) >= 1e4:
        return f"{value:.0f}" if abs(value) < 1e15 else f"{value:.4g}"
    return f"{value:.4g}"


def _with_interval(value: float | None, ci: Mapping[str, Any] | None) -> str:
    if value is None:
        return "–"
    if ci is None:
        return number(value)
    return f"{number(value)} [{number(float(ci['low']))}, {number(float(ci['high']))}]"


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent="  ", break_on_hyphens=False) or [""]


def _arrow(base: Row, metric: str) -> str:
    return {"higher": " ↑", "lower": " ↓"}.get(base.directions.get(metric, ""), "")


def _count_text(value: Any) -> str:
    if isinstance(value, list):
        return "/".join(number(float(v)) for v in value)
    return number(float(value))


@dataclass
class _Cell:
    """One metric of a task: a headline metric, or a breakdown's group and metric."""

    metric: str
    group: str = ""  # of a breakdown cell
    inner: str = ""  # the metric within the group (``accuracy`` of ``by_type.a.accuracy``)
    n_metric: str | None = None  # the group's size, for breakdown cells

    @property
    def title(self) -> str:
        return f"{self.group} · {self.inner}" if self.group else self.metric


def _text_rows(comparison: Comparison, task: str, cell: _Cell, splits: bool, sizes: bool) -> list[list[str]]:
    """The cell's rows: each run (value [interval], Δ vs the first, Holm p, mark), each seed
    group (mean ± std; a count as it is), each paper row."""
    base = comparison.baseline(task)
    rows: list[list[str]] = []

    def size(row: Row) -> str:
        if cell.n_metric is not None and cell.n_metric in row.metrics:
            return number(row.metrics[cell.n_metric])
        ci = row.intervals.get(cell.metric)
        return str(ci.get("units", "")) if isinstance(ci, dict) else ""

    for row in comparison.task_runs(task):
        if cell.metric not in row.metrics:
            continue
        diff, verdict = _delta(row, base, cell.metric)
        test = _test_of(row, cell.metric)
        rows.append([row.name, *([row.split or ""] if splits else []), *([size(row)] if sizes else []),
                     _with_interval(row.metrics[cell.metric], row.intervals.get(cell.metric)),
                     "" if diff is None else f"{diff:+.4g}",
                     "" if test is None else f"{float(test['p_holm']):.2g}",
                     " ".join(x for x in (verdict, "*" if significant(test) else "") if x)])
    for group in comparison.task_seeds(task):
        if cell.metric in group["metrics"]:
            stats = group["metrics"][cell.metric]
            counted = (group.get("counts") or {})
            shown = _count_text(counted[cell.metric]) if cell.metric in counted else \
                f"{number(stats['mean'])} ± {number(stats['std'])}"
            seeds = ", ".join(str(s) for s in group["seeds"])
            n_value = (group.get("counts") or {}).get(cell.n_metric) if cell.n_metric else None
            rows.append([f"{readable(group['model'])}, seeds {seeds}: mean ± std", *([""] if splits else []),
                         *([_count_text(n_value) if n_value is not None else ""] if sizes else []), shown, "", "", ""])
    for paper in comparison.task_papers(task):
        if cell.metric in paper.metrics:
            rows.append([f"{paper.model} [paper]", *([paper.split or ""] if splits else []),
                         *([""] if sizes else []), number(paper.metrics[cell.metric]), "", "", ""])
    return rows


def _layout(header: list[str], blocks: list[tuple[str, list[list[str]]]], indent: str = "  ") -> list[str]:
    """Aligned rows under their blocks' titles; columns other than the first that are empty in
    every row are left out, and the first (the run's name) narrowed to keep WIDTH: a longer
    name gets a line of its own above its row (its middle cut out if even that is too short)."""
    body = [r for _, rows in blocks for r in rows]
    keep = [i for i in range(len(header)) if i == 0 or any(r[i] for r in body)]
    header = [header[i] for i in keep]
    blocks = [(title, [[r[i] for i in keep] for r in rows]) for title, rows in blocks]
    widths = [max(len(r[i]) for r in [header, *[r for _, rows in blocks for r in rows]]) for i in range(len(header))]
    over = len(indent) + sum(widths) + 2 * (len(widths) - 1) - WIDTH
    if over > 0:
        widths[0] = max(12, widths[0] - over)

    def line(cells: list[str]) -> list[str]:
        above = []
        if len(cells[0]) > widths[0]:
            above, cells = [indent + shorten(cells[0], WIDTH - len(indent))], ["", *cells[1:]]
        return [*above, shorten((indent + "  ".join(c.ljust(w) for c, w in zip(cells, widths))).rstrip(), WIDTH)]

    lines = line(header)
    for title, rows in blocks:
        if rows:
            lines += [shorten(title, WIDTH), *[x for r in rows for x in line(r)]]
    return lines


def _splits_vary(comparison: Comparison, task: str) -> bool:
    return len({r.split for r in [*comparison.task_runs(task), *comparison.task_papers(task)]}) > 1


def family_size(comparison: Comparison, task: str, family: str) -> int:
    """How many tests a run's Holm correction in ``family`` covered (the most over the runs)."""
    return max(len(((r.versus or {}).get("families") or {}).get(family) or []) for r in comparison.task_runs(task))


def paired_note(comparison: Comparison, task: str) -> list[str]:
    """What the tests are, which family Holm corrected them in, and the runs not tested."""
    lines: list[str] = []
    tests = [t for r in comparison.task_runs(task) for m in comparison.headline(task)
             if (t := _test_of(r, m)) is not None]
    if tests:
        kinds = ", ".join(dict.fromkeys(test_units(t) for t in tests))
        size = family_size(comparison, task, HEADLINE)
        lines += _wrapped(f"paired tests against the first run ({kinds}): Δ this run minus the first; "
                          f"Holm p corrected within the {size} headline metric{'s' if size != 1 else ''} "
                          f"(each breakdown is a family of its own); * Holm p < {ALPHA}.")
    for row in comparison.task_runs(task):
        if row.versus is not None and "refused" in row.versus:
            lines += _wrapped(f"{row.name}: {row.versus['refused']}")
    return lines


def _count_lines(comparison: Comparison, task: str) -> list[str]:
    """Counts and reference figures outside the breakdowns, on one line: each value once
    when every row agrees."""
    parts = []
    for metric in comparison.counts(task):
        rows = [r for r in [*comparison.task_runs(task), *comparison.task_papers(task)] if metric in r.metrics]
        values = {number(r.metrics[metric]) for r in rows}
        if len(values) == 1:
            parts.append(f"{metric} {values.pop()}")
        else:
            parts.append(f"{metric}: " + ", ".join(
                f"{r.name if r.citation is None else r.model + ' [paper]'} {number(r.metrics[metric])}" for r in rows))
    return _wrapped("counts and reference figures (not tested): " + "; ".join(parts)) if parts else []


def breakdown_cells(comparison: Comparison, task: str, breakdown: str) -> list[_Cell]:
    """The breakdown's cells, group by group; each group's size (its count, ``n`` first) goes
    beside its other metrics."""
    info = comparison.metric_info(task)
    groups: dict[str, list[tuple[str, str]]] = {}
    for metric in comparison.breakdowns(task)[breakdown]:
        found = breakdown_of(metric)
        assert found is not None
        groups.setdefault(found[1], []).append((metric, found[2]))
    cells = []
    for group, members in groups.items():
        counts = sorted([m for m, _ in members if is_count(m, info)], key=lambda m: m.rsplit(".", 1)[-1] != "n")
        n_metric = counts[0] if counts else None
        for metric, inner in members:
            if metric != n_metric:
                cells.append(_Cell(metric, group, inner or breakdown.rsplit(".", 1)[-1], n_metric))
    return cells


def text_table(comparison: Comparison, breakdowns: bool = False) -> str:
    """Plain text for the terminal, no line wider than ``WIDTH``: per task, a block per headline
    metric (its runs, seed groups and paper rows), the counts, the tests' note; with
    ``breakdowns``, a table per breakdown (each its own Holm family), else their names."""
    lines: list[str] = []
    for task in comparison.tasks:
        base = comparison.baseline(task)
        splits = _splits_vary(comparison, task)
        header = ["run", *(["split"] if splits else []), "value [95% CI]", "Δ vs first", "Holm p", ""]
        split_note = "" if splits else f" (split {base.split})"
        lines.append(shorten(f"## {task}{split_note}", WIDTH))
        blocks = [(f"{m}{_arrow(base, m)}", _text_rows(comparison, task, _Cell(m), splits, False))
                  for m in comparison.headline(task)]
        lines += _layout(header, blocks)
        lines += _count_lines(comparison, task)
        citations = sorted({p.citation for p in comparison.task_papers(task) if p.citation})
        for citation in citations:
            lines += _wrapped(f"[paper]: {citation}")
        for note in not_comparable_notes(comparison.task_runs(task), comparison.task_papers(task)):
            lines += _wrapped(note)
        for note in unlike_notes(comparison.task_runs(task)):
            lines += _wrapped(note)
        lines += paired_note(comparison, task)
        lines += _judge_agreement_lines(comparison, task)
        lines += across_runs_lines([(r.name, r.results, r.run) for r in comparison.task_runs(task) if r.run is not None])
        lines += [part for line in parity_lines([(r.name, r.run) for r in comparison.task_runs(task) if r.run])
                  for part in (_wrapped(line) if line else [line])]
        found = comparison.breakdowns(task)
        if found and breakdowns:
            for name in found:
                cells = breakdown_cells(comparison, task, name)
                size = family_size(comparison, task, name)
                lines.append("")
                lines += _wrapped(f"### {name}: {len({c.group for c in cells})} groups"
                                  + (f"; Holm within this breakdown ({size} cells a run)" if size else ""))
                header = ["run", *(["split"] if splits else []), "n", "value [95% CI]", "Δ vs first", "Holm p", ""]
                lines += _layout(header, [(f"{c.title}{_arrow(base, c.metric)}",
                                           _text_rows(comparison, task, c, splits, True)) for c in cells])
        elif found:
            groups = {name: len({breakdown_of(m)[1] for m in ms}) for name, ms in found.items()}  # type: ignore[index]
            lines += _wrapped("breakdowns (--breakdowns shows them, each its own Holm family): "
                              + ", ".join(f"{name} ({k} groups)" for name, k in groups.items()))
        lines.append("")
    if comparison.published and any(r.versus for r in comparison.runs):
        lines.append("Paper rows have no per-unit data: they are not tested.")
    while lines and not lines[-1]:
        lines.pop()
    return "".join(shorten(line, WIDTH) + "\n" for line in lines)


def _judge_agreement_lines(comparison: Comparison, task: str) -> list[str]:
    """The runs' judge agreement (``abduct_report.judge_agreement``), a row per run and judge."""
    header, rows = judge_agreement_rows([(r.name, r.results) for r in comparison.task_runs(task) if r.run is not None])
    if not rows:
        return []
    table = _layout(header, [("", rows)])
    return ["", "### Judge agreement", table[0], *table[2:]]  # table[1]: the untitled block's empty title


RUN_COLOUR, PAPER_COLOUR = "C0", "#aaaaaa"  # paper rows grey, as in the table
LABEL_LIMIT = 30  # characters a bar's name keeps (report_page.label's default cut)


def _plots(comparison: Comparison, task: str, most: int = 6) -> Iterator[str]:
    """One bar chart per headline metric that rates models (runs blue; paper rows grey, only
    those comparable with every run, ``conditions.chart_papers``), inlined; none without
    matplotlib. Every bar has a name of its own (``conditions.distinct_names``)."""
    if not have_matplotlib():
        return
    base = comparison.baseline(task)
    runs = comparison.task_runs(task)
    rows = [*runs, *chart_papers(runs, comparison.task_papers(task))]
    for metric in [m for m in comparison.headline(task) if rates_models(base, m)][:most]:
        groups: dict[str, dict[str, float]] = {}
        errors: dict[str, tuple[float, float]] = {}
        colours: dict[str, str] = {}
        drawn = [row for row in rows if metric in row.metrics]
        names = fitted_names(distinct_names([f"{r.name} (paper)" if r.citation else r.name for r in drawn],
                                            [[r.split or "", r.setting or "", r.source or "",
                                              r.run.name if r.run else ""] for r in drawn]), LABEL_LIMIT)
        for row, name in zip(drawn, names):
            groups[name] = {metric: row.metrics[metric]}
            colours[name] = PAPER_COLOUR if row.citation else RUN_COLOUR
            if (ci := row.intervals.get(metric)) is not None:  # paper rows have none: no whisker
                errors[name] = (float(ci["low"]), float(ci["high"]))
        png = bars(f"{task}: {metric}", groups, errors, colours)
        if png is not None:
            yield figure_html("", png, alt=f"{task} {metric}")


def disagreement_pages(comparison: Comparison, html_out: Path) -> dict[str, str]:
    """``{file name: page}``: for each task, each later run against its first, the samples
    one got right and the other wrong (the pages sit beside ``html_out``)."""
    pages = {}
    for task in comparison.tasks:
        runs = [r for r in comparison.runs if r.task == task and r.run is not None]
        for i, row in enumerate(runs[1:], start=1):
            base = runs[0]
            assert base.run is not None and row.run is not None
            views = disagreement((base.name, base.run), (row.name, row.run), html_out.parent)
            name = f"{html_out.stem}-disagree-{task}-{i}.html"
            pages[name] = samples_page(f"{task}: {base.name} vs {row.name}, where they disagree", views,
                                       "one run right, the other wrong; sort by margin: the largest score differences",
                                       back=html_out.name)
    return pages


def _link(target: Path, where: Path | None) -> str:
    """``target`` relative to the page's folder (the page moves with the runs), else a file URI."""
    if where is not None:
        try:
            return Path(os.path.relpath(target.resolve(), where.resolve())).as_posix()
        except ValueError:  # another drive
            pass
    return target.resolve().as_uri()


def _html_value(row: Row, base: Row, metric: str, test_in_cell: bool = False) -> str:
    """``value [low, high]`` and, after the first run, ``(Δ ±d *)`` coloured by the direction
    (with ``test_in_cell``, the Holm p beside it: the breakdown tables have no test table)."""
    value = row.metrics.get(metric)
    if value is None:
        return "–"
    shown = html.escape(_with_interval(value, row.intervals.get(metric)))
    diff, verdict = _delta(row, base, metric)
    if diff is not None:
        test = _test_of(row, metric)
        p_holm = f"; Holm p {float(test['p_holm']):.2g}" if test_in_cell and test is not None else ""
        star = " *" if significant(test) else ""
        shown += f" <span class=\"{verdict}\">(Δ {diff:+.4g}{p_holm}{star})</span>"
    return shown


def _seed_cells(group: dict[str, Any], metrics: Sequence[str]) -> list[str]:
    counted = group.get("counts") or {}
    cells = []
    for metric in metrics:
        stats = group["metrics"].get(metric)
        if metric in counted:
            cells.append(html.escape(_count_text(counted[metric])))
        elif stats is None:
            cells.append("–")
        else:
            cells.append(f"{number(stats['mean'])} ± {number(stats['std'])}")
    return cells


def _seed_name(group: dict[str, Any]) -> str:
    return html.escape(f"{readable(group['model'])}, seeds {', '.join(str(s) for s in group['seeds'])}: mean ± std")


def _html_table(header: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]], names: int = 1) -> str:
    """A table in a box that scrolls sideways when the table is wider than the page (the page
    itself never is); ``rows``: (the row's class, its cells), the first ``names`` cells names
    (left-aligned, broken anywhere rather than widening the table)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(("<tr>" if not kind else f"<tr class=\"{kind}\">")
                   + "".join(f"<td class=\"name\">{c}</td>" if i < names else f"<td>{c}</td>" for i, c in enumerate(cells))
                   + "</tr>" for kind, cells in rows)
    return f"<div class=\"scroll\"><table><tr>{head}</tr>{body}</table></div>"


def _html_headline(comparison: Comparison, task: str) -> str:
    """Runs, seed groups and paper rows x the headline metrics and the counts."""
    base = comparison.baseline(task)
    columns = [*comparison.headline(task), *comparison.counts(task)]
    rows: list[tuple[str, list[str]]] = []
    for row in comparison.task_runs(task):
        rows.append(("", [html.escape(row.name), html.escape(shown_conditions(row)),
                          *[_html_value(row, base, m) for m in columns]]))
    for group in comparison.task_seeds(task):
        rows.append(("seeds", [_seed_name(group), html.escape(base.split or ""), *_seed_cells(group, columns)]))
    for row in comparison.task_papers(task):
        rows.append(("paper", [f"{html.escape(row.model)} (paper{', ' + html.escape(row.source) if row.source else ''})",
                               html.escape(shown_conditions(row)),
                               *[number(row.metrics[m]) if m in row.metrics else "–" for m in columns]]))
    return _html_table(["model", "split, conditions", *[m + _arrow(base, m) for m in columns]], rows)


def _html_tests(comparison: Comparison, task: str) -> list[str]:
    """The paired tests of the headline metrics, one row per later run and metric."""
    base = comparison.baseline(task)
    rows: list[tuple[str, list[str]]] = []
    for row in comparison.task_runs(task):
        for metric in comparison.headline(task):
            if (t := _test_of(row, metric)) is not None:
                _, verdict = _delta(row, base, metric)
                star = " *" if significant(t) else ""
                rows.append(("", [html.escape(row.name), html.escape(metric),
                                  f"<span class=\"{verdict}\">{t['difference']:+.4g} [{t['low']:+.4g}, "
                                  f"{t['high']:+.4g}]{star}</span>",
                                  f"{t['p_value']:.3g}", f"{t['p_holm']:.3g}",
                                  html.escape(test_units(t))]))
    out = []
    if rows:
        out.append(f"<h3>Paired tests against {html.escape(base.name)}</h3>")
        out.append(_html_table(["run", "metric", "Δ [95% CI]", "p", "Holm p", "test, units"], rows))
        out.append("<p class=\"note\">Holm's correction runs over the headline metrics only; each breakdown "
                   "below is a family of its own.</p>")
    out += [f"<p class=\"note\">{html.escape(row.name)}: {html.escape(row.versus['refused'])}</p>"
            for row in comparison.task_runs(task) if row.versus is not None and "refused" in row.versus]
    return out


def _html_breakdown(comparison: Comparison, task: str, name: str) -> str:
    """One breakdown, collapsed: a row per group and run, the group's n, each metric's value,
    interval and Δ with its Holm p (corrected within this breakdown)."""
    base = comparison.baseline(task)
    cells = breakdown_cells(comparison, task, name)
    groups: dict[str, list[_Cell]] = {}
    first_of: dict[str, str] = {}  # each metric of the groups -> a cell's full name (for its arrow)
    for cell in cells:
        groups.setdefault(cell.group, []).append(cell)
        first_of.setdefault(cell.inner, cell.metric)
    inner = list(first_of)
    rows: list[tuple[str, list[str]]] = []
    for group, members in groups.items():
        by_inner = {c.inner: c for c in members}
        n_metric = members[0].n_metric
        for row in [*comparison.task_runs(task), *comparison.task_papers(task)]:
            if not any(c.metric in row.metrics for c in members):
                continue
            size = number(row.metrics[n_metric]) if n_metric and n_metric in row.metrics else next(
                (str(ci["units"]) for c in members if isinstance(ci := row.intervals.get(c.metric), dict) and "units" in ci), "")
            if row.citation is not None:
                values = [number(row.metrics[by_inner[k].metric]) if k in by_inner and by_inner[k].metric in row.metrics
                          else "–" for k in inner]
                rows.append(("paper", [html.escape(group), html.escape(f"{row.model} (paper)"), size, *values]))
            else:
                values = [_html_value(row, base, by_inner[k].metric, test_in_cell=True) if k in by_inner else "–"
                          for k in inner]
                rows.append(("", [html.escape(group), html.escape(row.name), size, *values]))
    family = family_size(comparison, task, name)
    summary = (f"{name}: {len(groups)} groups x {len(inner)} metric{'s' if len(inner) != 1 else ''}"
               + (f"; paired tests Holm-corrected within this breakdown ({family} cells a run)" if family else ""))
    return (f"<details><summary>{html.escape(summary)}</summary>"
            + _html_table(["group", "run", "n", *[k + _arrow(base, first_of[k]) for k in inner]], rows, names=2)
            + "</details>")


def html_page(comparison: Comparison, disagreements: Sequence[str] = (), title: str | None = None,
              where: Path | None = None) -> str:
    """The comparison page (``where``: the folder it is written to, for relative links)."""
    title = title or "abduct compare: " + ", ".join(comparison.tasks)
    body = [f"<h1>{html.escape(title)}</h1>",
            "<p class=\"note\">Δ: difference from the first run of the task; "
            "<span class=\"better\">green</span> better, <span class=\"worse\">red</span> worse by the metric's "
            "direction (↑ higher is better, ↓ lower is better); * the paired test against the first run is "
            "significant (Holm-adjusted p < 0.05; the headline metrics are one family, each breakdown its own). "
            "[low, high]: the run's 95% interval. Counts and reference "
            "figures (no arrow) get no Δ and no bars. Paper rows (grey, italic; grey bars) are the "
            "published numbers, with no per-unit data and so no test; their split may differ from the runs', "
            "and only those measured under the runs' conditions (real data, as many candidates) are drawn beside "
            "them. Whiskers: a run's 95% interval; a bar without one has none.</p>"]
    for task in comparison.tasks:
        body.append(f"<h2>{html.escape(task)}</h2>")
        body += [f"<p class=\"note\"><strong>{html.escape(note)}</strong></p>"  # before the numbers it qualifies
                 for note in [*not_comparable_notes(comparison.task_runs(task), comparison.task_papers(task)),
                              *unlike_notes(comparison.task_runs(task))]]
        body.append(_html_headline(comparison, task))
        citations = sorted({p.citation for p in comparison.task_papers(task) if p.citation})
        body += [f"<p class=\"note\">Paper rows: {html.escape(c)}</p>" for c in citations]
        body += _html_tests(comparison, task)
        body += judge_agreement_html([(r.name, r.results) for r in comparison.task_runs(task) if r.run is not None])
        body += across_runs_html([(r.name, r.results, r.run) for r in comparison.task_runs(task) if r.run is not None])
        breakdowns = comparison.breakdowns(task)
        if breakdowns:
            body.append("<h3>Breakdowns</h3>")
            body += [_html_breakdown(comparison, task, name) for name in breakdowns]
        body += list(_plots(comparison, task))
        runs = [r for r in comparison.task_runs(task) if r.run is not None]
        links = ", ".join(f"<a href=\"{html.escape(_link(r.run / 'report.html', where))}\">{html.escape(r.name)}</a>"
                          for r in runs if r.run is not None)
        body.append(f"<p class=\"note\">Run reports: {links}</p>")
        mine = [n for n in disagreements if n.split("-disagree-", 1)[-1].rsplit("-", 1)[0] == task]
        if mine:
            body.append("<p>Samples where the runs disagree: " + ", ".join(
                f"<a href=\"{html.escape(n)}\">{html.escape(runs[int(n.rsplit('-', 1)[1][:-5])].name)} vs "
                f"{html.escape(runs[0].name)}</a>" for n in mine) + "</p>")
    return page(title, body)
