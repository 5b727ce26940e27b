"""What a flattened metric name says, read alike by report.md, report.html, its plots and
``abduct compare``: whether it is a breakdown cell (``by_domain.indoor.accuracy``,
``per_chunk.3.p_at_1``) and whether it is a count or reference figure rather than a score.
Imports nothing of this package, so every page module can."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

COUNT_KEYS = frozenset({"n", "count", "instances", "images", "chunks"})  # sizes, not scores: not plotted
_BREAKDOWN_PART = re.compile(r"(?:by|per)_.+")


def breakdown_of(metric: str) -> tuple[str, str, str] | None:
    """``(breakdown, group, metric within the group)`` of a breakdown cell, None for any other
    metric: ``by_domain.indoor.accuracy`` -> ``("by_domain", "indoor", "accuracy")``;
    ``per_position.3`` -> ``("per_position", "3", "")``."""
    parts = metric.split(".")
    for i, part in enumerate(parts[:-1]):
        if _BREAKDOWN_PART.fullmatch(part):
            return ".".join(parts[: i + 1]), parts[i + 1], ".".join(parts[i + 2:])
    return None


def is_count(metric: str, metric_info: Mapping[str, Any] | None) -> bool:
    """A count or reference figure: declared with no direction (``better`` null), or, undeclared,
    named as a size (``n``, ``chunks``, ``instances``, ...)."""
    info = (metric_info or {}).get(metric)
    if isinstance(info, dict):
        return info.get("better") is None
    return metric.rsplit(".", 1)[-1] in COUNT_KEYS
