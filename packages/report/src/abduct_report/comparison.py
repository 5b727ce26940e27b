"""``abduct compare RUN_DIR...``: finished runs side by side (models x tasks), beside the
papers' published rows, with the differences marked.

Published rows come from the plugins' ``register_published`` hook (``abduct.PublishedRow``;
a package ships them as ``published.json``, see ``abduct.kit.read_published``).

Differences: each run's value is compared with the first run's on the same task and metric
(its ``Δ``), green when better and red when worse by the metric's direction (``metric_info``
in results.json; a metric without one is shown unmarked). With per-unit data (units.json),
each run after the first is also tested against it, paired on the units both scored
(``paired.py``): the difference's interval and p-values, ``*`` where Holm's p < 0.05; runs
that differ only in ``--seed`` get mean ± standard deviation. Paper rows have no per-unit
data and are never tested.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.host import RESAMPLES, Registry, get_registry
from abduct.kit import read_json
from abduct_report.markdown import flatten_metrics, format_value
from abduct_report.paired import ALPHA, seed_groups
from abduct_report.paired import versus as paired_versus
from abduct_report.report_page import COUNT_KEYS, bars, direction_arrow, figure_html, have_matplotlib, page, table
from abduct_report.samples import disagreement, samples_page


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
    label: str | None = None  # what pages call the run (the demo's "fine_tuned"); default: the spec, paths cut

    @property
    def name(self) -> str:
        return self.label or readable(self.model)

    @property
    def intervals(self) -> dict[str, Any]:
        return dict(self.results.get("intervals") or {})


ABSOLUTE_PATH = re.compile(r"(?<![\w.])/[^,:=\s]+")


def readable(spec: str) -> str:
    """A model spec for a page: an absolute path in it (a checkpoint in a temporary directory)
    cut to its last two parts, ``clip:…/train/best.pt``."""
    return ABSOLUTE_PATH.sub(lambda m: "…/" + "/".join(Path(m.group(0)).parts[-2:]), spec)


def rates_models(row: Row, metric: str) -> bool:
    """Whether ``metric`` rates the model: counts (chunks, instances) and reference figures
    (declared with no direction) get no bars and no Δ; a metric nobody declared does, unless
    its name says it is a size."""
    info = (row.results.get("metric_info") or {}).get(metric)
    if isinstance(info, dict):
        return info.get("better") is not None
    return metric.rsplit(".", 1)[-1] not in COUNT_KEYS


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
                   run=Path(directory), directions=directions, results=results)
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


def compare(directories: Sequence[Path], registry: Registry | None = None, published: bool = True,
            resamples: int = RESAMPLES, seed: int = 0, labels: Mapping[Path, str] | None = None) -> Comparison:
    """The runs, the papers' rows for their tasks, each later run's paired test against the first
    run of its task (``resamples`` 0: none) and the seed groups; ``labels`` names runs by directory."""
    runs = [load_run(Path(d)) for d in directories]
    for row in runs:
        row.label = (labels or {}).get(Path(row.run or ""))
    registry = registry or get_registry()
    rows = [p for task in dict.fromkeys(r.task for r in runs) for p in published_rows(task, registry)] if published else []
    comparison = Comparison(runs, rows)
    for task in comparison.tasks:
        base = comparison.baseline(task)
        for row in [r for r in runs if r.task == task and r is not base]:
            if resamples > 0 and row.run is not None and base.run is not None:
                row.versus = paired_versus(base.run, base.results, row.run, row.results, resamples, seed)
    comparison.seeds = seed_groups([(r.run, r.results, r.metrics) for r in runs if r.run is not None])
    return comparison


def significant(test: dict[str, Any] | None) -> bool:
    return test is not None and float(test["p_holm"]) < ALPHA


def _test_of(row: Row, metric: str) -> dict[str, Any] | None:
    found = ((row.versus or {}).get("metrics") or {}).get(metric)
    return found if isinstance(found, dict) else None


def test_lines(comparison: Comparison, task: str) -> list[str]:
    """The paired tests of the task's runs against its first run, one line per metric."""
    base = comparison.baseline(task)
    lines: list[str] = []
    for row in [r for r in comparison.runs if r.task == task and r.versus is not None]:
        assert row.versus is not None
        if "refused" in row.versus:
            lines.append(f"  {row.name}: {row.versus['refused']}")
        for metric, t in (row.versus.get("metrics") or {}).items():
            lines.append(f"  {row.name} − {base.name}  {metric}: Δ {t['difference']:+.4g} "
                         f"[{t['low']:+.4g}, {t['high']:+.4g}]  p {t['p_value']:.3g}  Holm p {t['p_holm']:.3g}"
                         f"{' *' if significant(t) else ''}  ({t['test']}, {t['units']} {t['unit']})")
    if lines:
        lines.insert(0, f"paired tests against the first run (95% intervals; * Holm p < {ALPHA}):")
    return lines


def seed_lines(comparison: Comparison, task: str) -> list[str]:
    lines = []
    for group in [g for g in comparison.seeds if g["task"] == task]:
        values = ", ".join(f"{m} {format_value(v['mean'])} ± {format_value(v['std'])}" for m, v in group["metrics"].items())
        lines.append(f"{group['model']} over seeds {group['seeds']} (mean ± sample std): {values}")
    return lines


def _delta(row: Row, base: Row, metric: str) -> tuple[float | None, str]:
    """(difference from the baseline run, "better" / "worse" / "")."""
    if row is base or metric not in row.metrics or metric not in base.metrics or not rates_models(base, metric):
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
                mark = {"better": " +", "worse": " -"}.get(verdict, "") + (" *" if significant(_test_of(row, metric)) else "")
                ci = row.intervals.get(metric)
                shown = format_value(value) if value is None or ci is None else \
                    f"{format_value(value)} [{format_value(ci['low'])}, {format_value(ci['high'])}]"
                cells.append("–" if value is None else shown + ("" if diff is None else f" (Δ {diff:+.4g}{mark})"))
            body.append([row.name, row.split or "", *cells])
        for row in [p for p in comparison.published if p.task == task]:
            body.append([f"{row.model} [paper]", row.split or "",
                         *[format_value(row.metrics[m]) if m in row.metrics else "–" for m in columns]])
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
        lines.append(f"## {task}")
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in [header, *body]]
        citations = sorted({p.citation for p in comparison.published if p.task == task and p.citation})
        lines += [f"[paper]: {c}" for c in citations]
        lines += test_lines(comparison, task) + seed_lines(comparison, task)
        lines.append("")
    if comparison.published and any(r.versus for r in comparison.runs):
        lines.append("Paper rows have no per-unit data: they are not tested.")
    return "\n".join(lines)


RUN_COLOUR, PAPER_COLOUR = "C0", "#aaaaaa"  # paper rows grey, as in the table


def _plots(comparison: Comparison, task: str, columns: list[str], most: int = 6) -> Iterator[str]:
    """One bar chart per metric that rates models (runs blue, paper rows grey), inlined; none
    without matplotlib."""
    if not have_matplotlib():
        return
    base = comparison.baseline(task)
    rows = [*[r for r in comparison.runs if r.task == task], *[p for p in comparison.published if p.task == task]]
    for metric in [m for m in columns if rates_models(base, m)][:most]:
        groups: dict[str, dict[str, float]] = {}
        errors: dict[str, tuple[float, float]] = {}
        colours: dict[str, str] = {}
        for row in rows:
            if metric in row.metrics:
                name = f"{row.name} (paper)" if row.citation else row.name
                while name in groups:  # two runs of one model (other settings): keep both
                    name += "'"
                groups[name] = {metric: row.metrics[metric]}
                colours[name] = PAPER_COLOUR if row.citation else RUN_COLOUR
                if (ci := row.intervals.get(metric)) is not None:
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


def html_page(comparison: Comparison, disagreements: Sequence[str] = (), title: str | None = None,
              where: Path | None = None) -> str:
    """The comparison page (``where``: the folder it is written to, for relative links)."""
    title = title or "abduct compare: " + ", ".join(comparison.tasks)
    body = [f"<h1>{html.escape(title)}</h1>",
            "<p class=\"note\">Δ: difference from the first run of the task; "
            "<span class=\"better\">green</span> better, <span class=\"worse\">red</span> worse by the metric's "
            "direction (↑ higher is better, ↓ lower is better); * the paired test against the first run is "
            "significant (Holm-adjusted p < 0.05). [low, high]: the run's 95% interval. Counts and reference "
            "figures (no arrow) get no Δ and no bars. Paper rows (grey, italic; grey bars) are the "
            "published numbers, with no per-unit data and so no test; their split may differ from the runs'.</p>"]
    for task in comparison.tasks:
        columns = comparison.columns(task)
        base = comparison.baseline(task)
        rows: list[str] = []
        for row in [r for r in comparison.runs if r.task == task]:
            cells = [html.escape(row.name), html.escape(row.split or "")]
            for metric in columns:
                value = row.metrics.get(metric)
                diff, verdict = _delta(row, base, metric)
                ci = row.intervals.get(metric)
                shown = "–" if value is None else format_value(value)
                if value is not None and ci is not None:
                    shown += f" [{format_value(ci['low'])}, {format_value(ci['high'])}]"
                if diff is not None:
                    star = " *" if significant(_test_of(row, metric)) else ""
                    shown += f" <span class=\"{verdict}\">(Δ {diff:+.4g}{star})</span>"
                cells.append(shown)
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        for row in [p for p in comparison.published if p.task == task]:
            cells = [f"{html.escape(row.model)} (paper{', ' + html.escape(row.source) if row.source else ''})",
                     html.escape(row.split or ""), *[format_value(row.metrics[m]) if m in row.metrics else "–" for m in columns]]
            rows.append("<tr class=\"paper\">" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        header = ["model", "split", *[m + direction_arrow({"metric_info": {m: {"better": base.directions.get(m)}}}, m)
                                       for m in columns]]
        body += [f"<h2>{html.escape(task)}</h2>", table(header, []).replace("</table>", "".join(rows) + "</table>")]
        citations = sorted({p.citation for p in comparison.published if p.task == task and p.citation})
        body += [f"<p class=\"note\">Paper rows: {html.escape(c)}</p>" for c in citations]
        tests = test_lines(comparison, task)
        if tests:
            body.append("<pre>" + html.escape("\n".join(tests)) + "</pre>")
        body += [f"<p>{html.escape(line)}</p>" for line in seed_lines(comparison, task)]
        body += list(_plots(comparison, task, columns))
        runs = [r for r in comparison.runs if r.task == task and r.run is not None]
        links = ", ".join(f"<a href=\"{html.escape(_link(r.run / 'report.html', where))}\">{html.escape(r.name)}</a>"
                          for r in runs if r.run is not None)
        body.append(f"<p class=\"note\">Run reports: {links}</p>")
        mine = [n for n in disagreements if n.split("-disagree-", 1)[-1].rsplit("-", 1)[0] == task]
        if mine:
            body.append("<p>Samples where the runs disagree: " + ", ".join(
                f"<a href=\"{html.escape(n)}\">{html.escape(runs[int(n.rsplit('-', 1)[1][:-5])].name)} vs "
                f"{html.escape(runs[0].name)}</a>" for n in mine) + "</p>")
    return page(title, body)
