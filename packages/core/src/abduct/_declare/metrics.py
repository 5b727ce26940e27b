"""Metric declarations matched to the numbers a run reports.

A task's ``metric_info`` (``abduct.contract.metric_info``) and an evaluation's own are merged
(``declared_info``: the evaluation's first), then every numeric leaf of the metrics, by its
dotted name, is matched to a declaration (``lookup``: the exact key, else the first pattern
that matches). ``results.json`` carries ``"metric_info": {metric: {"better": "higher" | "lower"
| null, "range": [lo, hi] | null, "chance": float | null}}`` for every numeric metric the task
declared; ``better`` is null for figures that do not rate the model (``COUNT``, ``reference``).
The numbers nobody declared are listed apart (``resolve``). ``arrow_of`` reads the block back
for report.md and the demo tables (↑ / ↓).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping
from typing import Any

from abduct.contract.metric_info import ARROWS, MetricInfo


def flatten(metrics: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted name, value)`` of every leaf of nested metric tables, in order."""
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from flatten(value, name + ".")
        else:
            yield name, value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def lookup(declared: Mapping[str, MetricInfo], name: str) -> MetricInfo | None:
    """The declaration for the dotted metric ``name``: the exact key, else the first pattern."""
    if name in declared:
        return declared[name]
    for key, info in declared.items():
        if "*" in key and fnmatch.fnmatchcase(name, key):
            return info
    return None


def declared_info(
    task_info: Mapping[str, MetricInfo], extra: Mapping[str, MetricInfo] | None = None
) -> dict[str, MetricInfo]:
    """A task's ``metric_info`` with ``extra`` (an evaluation's own) taking precedence."""
    merged = dict(extra or {})  # first, so that its patterns are tried before the task's
    for key, info in task_info.items():
        merged.setdefault(key, info)
    return merged


def resolve(declared: Mapping[str, MetricInfo], metrics: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``(metric_info for results.json, numeric metrics nobody declared)``."""
    found: dict[str, Any] = {}
    missing: list[str] = []
    for name, value in flatten(metrics):
        if not _is_number(value):
            continue
        info = lookup(declared, name)
        if info is None:
            missing.append(name)
        else:
            found[name] = info.as_json()
    return found, missing


def arrow_of(metric_info: Mapping[str, Any], name: str) -> str:
    """↑ / ↓ for ``name`` from results.json's ``metric_info`` block ("" when unknown or a count)."""
    entry = metric_info.get(name)
    return ARROWS.get(str(entry.get("better")), "") if isinstance(entry, Mapping) else ""
