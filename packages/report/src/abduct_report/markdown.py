"""The human-readable Markdown report of a run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from abduct import MetricInfo
from abduct_report.conditions import input_facts, run_label
from abduct_report.metric_names import breakdown_of, is_count


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:.4g}"
    return str(value)


def _flatten(metrics: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            rows.extend(_flatten(value, name + "."))
        elif isinstance(value, (int, float, str)) or value is None:
            rows.append((name, value))
    return rows


def with_interval(value: Any, interval: Any) -> str:
    """``27.1 [25.8, 28.4]`` when the metric has an interval, the value alone otherwise."""
    if isinstance(interval, dict) and isinstance(value, (int, float)):
        return f"{_fmt(float(value))} [{_fmt(float(interval['low']))}, {_fmt(float(interval['high']))}]"
    return _fmt(value)


def interval_note(results: dict[str, Any]) -> str | None:
    """One sentence on what the intervals are and which units they resample."""
    intervals = results.get("intervals") or {}
    if not intervals:
        return None
    first = next(iter(intervals.values()))
    units = sorted({f"{i['unit']} ({i['units']}" + (f", in {i['clusters']} {i['clustered_by']} clusters)"
                                                   if i.get("clustered_by") else ")") for i in intervals.values()})
    return (f"[low, high]: {100 * first['level']:.0f}% {first['method']} interval, {first['resamples']} resamples "
            f"seeded by the run's seed, over {', '.join(units)}.")


def _limit(results: dict[str, Any]) -> str:
    if results.get("limit") is None:
        return "none"
    return f"the first {results['limit']} {results.get('limit_unit') or 'items'}"


def _arrow(results: dict[str, Any], name: str) -> str:
    better = ((results.get("metric_info") or {}).get(name) or {}).get("better")
    return MetricInfo(better=better).arrow if better in ("higher", "lower") else ""


@dataclass
class Breakdown:
    """A breakdown's cells (``by_domain.food.accuracy``, ``per_position.3``) as one table,
    groups x metrics, its sizes (``n``) first: report.md and report.html show each apart from
    the headline metrics (NL-EYE's 60 cells in one list would bury them)."""

    name: str
    cells: dict[str, dict[str, tuple[str, Any]]] = field(default_factory=dict)  # group -> metric -> (name, value)

    def columns(self, results: dict[str, Any]) -> tuple[list[str], list[str]]:
        """(sizes, scores): the cells' metrics, counts apart (declared with no direction, or named as a size)."""
        metrics = list(dict.fromkeys(m for row in self.cells.values() for m in row))
        first = {m: next(row[m][0] for row in self.cells.values() if m in row) for m in metrics}
        sizes = [m for m in metrics if is_count(first[m], results.get("metric_info"))]
        return sizes, [m for m in metrics if m not in sizes]

    def header(self, results: dict[str, Any]) -> list[str]:
        sizes, scores = self.columns(results)
        info = results.get("metric_info") or {}
        named = []
        for metric in scores:
            cell = next(row[metric][0] for row in self.cells.values() if metric in row)
            arrow = _arrow(results, cell)
            chance = (info.get(cell) or {}).get("chance")
            named.append(metric + (f" {arrow}" if arrow else "") + (f" (chance {_fmt(chance)})" if chance is not None else ""))
        return ["group", *sizes, *named]

    def rows(self, results: dict[str, Any]) -> list[list[str]]:
        sizes, scores = self.columns(results)
        intervals = results.get("intervals") or {}
        return [[group, *[_fmt(row[m][1]) if m in row else "" for m in sizes],
                 *[with_interval(row[m][1], intervals.get(row[m][0])) if m in row else "" for m in scores]]
                for group, row in self.cells.items()]

    def summary(self, results: dict[str, Any]) -> str:
        scores = len(self.columns(results)[1])
        return f"{self.name}: {len(self.cells)} group{'s' if len(self.cells) != 1 else ''}, {scores} metric{'s' if scores != 1 else ''}"


def split_breakdowns(metrics: dict[str, Any]) -> tuple[list[tuple[str, Any]], list[Breakdown]]:
    """The flattened metrics outside any breakdown, and each breakdown's cells."""
    headline: list[tuple[str, Any]] = []
    found: dict[str, Breakdown] = {}
    for name, value in _flatten(metrics):
        if (where := breakdown_of(name)) is None:
            headline.append((name, value))
        else:
            table = found.setdefault(where[0], Breakdown(where[0]))
            table.cells.setdefault(where[1], {})[where[2] or "value"] = (name, value)
    return headline, list(found.values())


def _markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    return ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header),
            *["| " + " | ".join(map(cell, row)) + " |" for row in rows]]


def shaped_inputs(results: dict[str, Any]) -> str:
    """What shaped the model's inputs and who served it (results.json's ``model.inputs``), one line."""
    return "; ".join(f"{key} {value}" for key, value in input_facts(results).items())


def markdown_report(results: dict[str, Any]) -> str:
    spec = results["model"]["spec"]
    lines = [
        f"# {results['task']} — {run_label(results) or spec}",
        "",
        f"- model: `{spec}`",
        *(f"- what shaped the inputs: {facts}" for facts in [shaped_inputs(results)] if facts),
        f"- data: `{results['data']['dir']}` (split `{results['split']}`)",
        f"- seed: {results['seed']}, limit: {_limit(results)}",
        f"- inputs the model went without (the task allows it): {', '.join(results['inputs']['ignored']) or 'none'}",
        f"- wall time: {results['timings']['total_seconds']:.1f} s "
        f"(model {results['timings']['model_seconds']:.1f} s)",
        "",
        "| metric | value | better | chance |",
        "|---|---|---|---|",
    ]
    info = results.get("metric_info", {})
    intervals = results.get("intervals") or {}
    headline, breakdowns = split_breakdowns(results["metrics"])
    for name, value in headline:
        entry = info.get(name, {})
        arrow = _arrow(results, name)
        better = f"{arrow} {entry['better']}" if arrow else ""
        chance = _fmt(entry["chance"]) if entry.get("chance") is not None else ""
        lines.append(f"| {name} | {with_interval(value, intervals.get(name))} | {better} | {chance} |")
    for table in breakdowns:
        lines += ["", f"### {table.summary(results)}", "", *_markdown_table(table.header(results), table.rows(results))]
    if (note := interval_note(results)) is not None:
        lines += ["", note]
    if "judge" in results:
        judge = results["judge"]
        lines += ["", f"Judged by `{judge['spec']}` (prompt sha256 `{judge['prompt_sha256']}`): "
                      f"{judge['judged']} items, {judge['parse_failures']} verdicts that could not be parsed."]
    lines += ["", "Per-sample predictions: `predictions.jsonl`. Full record: `results.json`.", ""]
    return "\n".join(lines)


# Shared with report.html and ``abduct compare``.
format_value = _fmt
flatten_metrics = _flatten
