"""Published rows shipped as data: ``<package>/published.json``, read for the
``register_published`` hook::

    {"citation": "Authors, Title, Venue Year",
     "rows": [{"task": "sherlock-retrieval", "model": "CLIP ViT-B/16", "split": "test",
               "source": "Table 2", "metrics": {"im2txt": 19.9, "p_at_1": 30.6}}]}

Each row: ``task`` (a registered task name), ``model``, ``split``, ``source`` (the table or
section of the paper, never empty), ``metrics`` (the task's metric names; a column abduct has no
metric for keeps the paper's name); optional ``setting`` (zero-shot, fine-tuned, oracle, human...),
``std`` (``{metric: standard deviation}`` where the paper gives one) and ``conditions`` (what a run
must share to be compared with the row, over the file's own ``conditions``: ``{"data": "real"}``,
``{"candidates": 1000}``; abduct-report reads them).
"""

from __future__ import annotations

import importlib.resources
import json
import math
from typing import Any

from abduct.contract.errors import PluginError
from abduct.contract.hooks import PublishedRow

PUBLISHED_FILE = "published.json"


def read_published(package: str) -> list[PublishedRow]:
    """The rows of ``package``'s ``published.json`` (none when it ships no such file); a
    malformed file is one line naming it and the row."""
    try:
        text = importlib.resources.files(package).joinpath(PUBLISHED_FILE).read_text(encoding="utf-8")
    except (ModuleNotFoundError, OSError):
        return []
    where = f"{package}/{PUBLISHED_FILE}"
    try:
        data = json.loads(text)
        citation, shared = str(data["citation"]), dict(data.get("conditions") or {})
        return [_row({**r, "conditions": {**shared, **(r.get("conditions") or {})}}, citation, f"{where}, row {i}")
                for i, r in enumerate(data["rows"])]
    except (ValueError, KeyError, TypeError) as exc:
        raise PluginError(f"{where} is malformed ({type(exc).__name__}: {exc})") from None


def _row(raw: dict[str, Any], citation: str, where: str) -> PublishedRow:
    metrics = {str(k): float(v) for k, v in raw["metrics"].items()}
    std = {str(k): float(v) for k, v in (raw.get("std") or {}).items()}
    bad = [k for k, v in {**metrics, **std}.items() if not math.isfinite(v)]
    source = str(raw.get("source") or "")
    if bad or not source or not metrics:
        problem = f"metric {bad[0]} is not finite" if bad else "no source" if not source else "no metrics"
        raise PluginError(f"{where}: {problem}")
    return PublishedRow(str(raw["task"]), str(raw["model"]), None if raw.get("split") is None else str(raw["split"]),
                        metrics, str(raw.get("citation") or citation), source, raw.get("setting") or None, std,
                        {str(k): v if isinstance(v, (int, float)) else str(v) for k, v in raw["conditions"].items()})
