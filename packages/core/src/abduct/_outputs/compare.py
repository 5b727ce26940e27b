"""``abduct compare RUN_DIR...``: finished runs side by side (models x tasks), beside the
papers' published rows, with the differences marked.

Published rows come from the plugins' ``register_published`` hook (``abduct.PublishedRow``;
a package ships them as ``published.json``, see ``abduct.kit.read_published``).

Differences: each run's value is compared with the first run's on the same task and metric
(its ``Δ``), green when better and red when worse by the metric's direction (``metric_info``
in results.json; a metric without one is shown unmarked).
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from abduct._outputs.html_report import bars, data_uri, direction_arrow, have_matplotlib, page, table
from abduct._outputs.report import flatten_metrics, format_value
from abduct._registry.registry import Registry, get_registry
from abduct.contract.errors import AbductError, DataError
from abduct.kit.io import read_json


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
                   run=Path(directory), directions=directions)
    except (KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"not an abduct results file (missing {exc})", file=results_file) from None


def published_rows(task: str, registry: Registry) -> list[Row]:
    """The papers' rows for ``task``, from the plugins' ``register_published`` hooks."""
    return [Row(r.model, r.task, dict(r.metrics), r.split, citation=r.citation, source=r.source,
                setting=r.setting, std=dict(r.std))
            for r in registry.published() if r.task == task]


@dataclass
class Comparison:
    runs: list[Row]
    published: list[Row]

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


def compare(directories: Sequence[Path], registry: Registry | None = None, published: bool = True) -> Comparison:
    runs = [load_run(Path(d)) for d in directories]
    registry = registry or get_registry()
    rows = [p for task in dict.fromkeys(r.task for r in runs) for p in published_rows(task, registry)] if published else []
    return Comparison(runs, rows)


def _delta(row: Row, base: Row, metric: str) -> tuple[float | None, str]:
    """(difference from the baseline run, "better" / "worse" / "")."""
    if row is base or metric not in row.metrics or metric not in base.metrics:
        return None, ""
    diff = row.metrics[metric] - base.metrics[metric]
    better = base.directions.get(metric) or row.directions.get(metric)
    if diff == 0 or better not in ("higher", "lower"):
        return diff, ""
    return diff, "better" if (diff > 0) == (better == "higher") else "worse"


def text_table(comparison: Comparison) -> str:
    """Plain text for the terminal: one block per task, runs then published rows."""
    lines: list[str] = []
    for task in comparison.tasks:
        columns = comparison.columns(task)
        base = comparison.baseline(task)
        header = ["model", "split", *[m + {"higher": " ↑", "lower": " ↓"}.get(base.directions.get(m, ""), "")
                                       for m in columns]]
        body: list[list[str]] = []
        for row in [r for r in comparison.runs if r.task == task]:
            cells = []
            for metric in columns:
                value = row.metrics.get(metric)
                diff, verdict = _delta(row, base, metric)
                mark = {"better": " +", "worse": " -"}.get(verdict, "")
                cells.append("–" if value is None else format_value(value)
                             + ("" if diff is None else f" (Δ {diff:+.4g}{mark})"))
            body.append([row.model, row.split or "", *cells])
        for row in [p for p in comparison.published if p.task == task]:
            body.append([f"{row.model} [paper]", row.split or "",
                         *[format_value(row.metrics[m]) if m in row.metrics else "–" for m in columns]])
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
        lines.append(f"## {task}")
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in [header, *body]]
        citations = sorted({p.citation for p in comparison.published if p.task == task and p.citation})
        lines += [f"[paper]: {c}" for c in citations]
        lines.append("")
    return "\n".join(lines)


def _plots(comparison: Comparison, task: str, columns: list[str], most: int = 6) -> Iterator[str]:
    """One bar chart per metric (runs and paper rows side by side), inlined; none without matplotlib."""
    if not have_matplotlib():
        return
    rows = [*[r for r in comparison.runs if r.task == task], *[p for p in comparison.published if p.task == task]]
    for metric in columns[:most]:
        groups: dict[str, dict[str, float]] = {}
        for row in rows:
            if metric in row.metrics:
                name = f"{row.model} (paper)" if row.citation else row.model
                while name in groups:  # two runs of one model (other settings): keep both
                    name += "'"
                groups[name] = {metric: row.metrics[metric]}
        png = bars(f"{task}: {metric}", groups)
        if png is not None:
            yield (f"<figure><img alt=\"{html.escape(task)} {html.escape(metric)}\" "
                   f"src=\"{data_uri(png, 'image/png')}\"></figure>")


def html_page(comparison: Comparison) -> str:
    body = ["<h1>abduct compare</h1>",
            "<p class=\"note\">Δ: difference from the first run of the task; "
            "<span class=\"better\">green</span> better, <span class=\"worse\">red</span> worse by the metric's "
            "direction (↑ higher is better, ↓ lower is better). Paper rows are the published numbers; "
            "their split may differ from the runs'.</p>"]
    for task in comparison.tasks:
        columns = comparison.columns(task)
        base = comparison.baseline(task)
        rows: list[list[str]] = []
        for row in [r for r in comparison.runs if r.task == task]:
            cells = [html.escape(row.model), html.escape(row.split or "")]
            for metric in columns:
                value = row.metrics.get(metric)
                diff, verdict = _delta(row, base, metric)
                shown = "–" if value is None else format_value(value)
                if diff is not None:
                    shown += f" <span class=\"{verdict}\">(Δ {diff:+.4g})</span>"
                cells.append(shown)
            rows.append(cells)
        for row in [p for p in comparison.published if p.task == task]:
            cells = [f"{html.escape(row.model)} <i>(paper{', ' + html.escape(row.source) if row.source else ''})</i>",
                     html.escape(row.split or "")]
            rows.append(cells + [format_value(row.metrics[m]) if m in row.metrics else "–" for m in columns])
        header = ["model", "split", *[m + direction_arrow({"metric_info": {m: {"better": base.directions.get(m)}}}, m)
                                       for m in columns]]
        body += [f"<h2>{html.escape(task)}</h2>", table(header, rows)]
        citations = sorted({p.citation for p in comparison.published if p.task == task and p.citation})
        body += [f"<p class=\"note\">Paper rows: {html.escape(c)}</p>" for c in citations]
        body += list(_plots(comparison, task, columns))
        runs = [r for r in comparison.runs if r.task == task and r.run is not None]
        links = ", ".join(f"<a href=\"{html.escape((r.run / 'report.html').resolve().as_uri())}\">{html.escape(r.model)}</a>"
                          for r in runs if r.run is not None)
        body.append(f"<p class=\"note\">Run reports: {links}</p>")
    return page("abduct compare", body)
