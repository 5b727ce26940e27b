"""The human-readable Markdown report of a run."""

from __future__ import annotations

from typing import Any

from abduct import MetricInfo


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
    units = sorted({f"{i['unit']} ({i['units']})" for i in intervals.values()})
    return (f"[low, high]: {100 * first['level']:.0f}% {first['method']} interval, {first['resamples']} resamples "
            f"seeded by the run's seed, over {', '.join(units)}.")


def _limit(results: dict[str, Any]) -> str:
    if results.get("limit") is None:
        return "none"
    return f"the first {results['limit']} {results.get('limit_unit') or 'items'}"


def markdown_report(results: dict[str, Any]) -> str:
    lines = [
        f"# {results['task']} — {results['model']['spec']}",
        "",
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
    for name, value in _flatten(results["metrics"]):
        entry = info.get(name, {})
        arrow = MetricInfo(better=entry.get("better")).arrow if entry.get("better") in ("higher", "lower") else ""
        better = f"{arrow} {entry['better']}" if arrow else ""
        chance = _fmt(entry["chance"]) if entry.get("chance") is not None else ""
        lines.append(f"| {name} | {with_interval(value, intervals.get(name))} | {better} | {chance} |")
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
