"""lmms-eval's ``process_results`` and aggregations for an exported task (see ``export``).

``process_results`` keeps each document's key and lmms-eval's answer (its text, or the
log-likelihood: lmms-eval's models return the loss, its negative); an aggregation hands all of
them to ``replay.replay`` (an ordinary run of the ``replay:FILE`` model) and returns one of the
task's metrics. The replay runs once per set
of answers, however many metrics lmms-eval asks for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from abduct_lmms.replay import Source, replay

_DONE: dict[tuple[str, str], dict[str, Any]] = {}


def answer_of(kind: str, result: Any) -> Any:
    """A text for generation; for log-likelihood, minus lmms-eval's loss (mean over the answer's tokens)."""
    if kind == "generate_until":
        return result if isinstance(result, str) else str(getattr(result, "text", result))
    loss = result[0] if isinstance(result, tuple | list) else result
    return -float(loss)


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    item = {"key": doc["key"], "result": results[0]}
    return {metric: item for metric in _metric_names(doc)}


def _metric_names(doc: dict[str, Any]) -> list[str]:
    return list(doc.get("metrics") or [])


def aggregate(source_file: Path, items: list[dict[str, Any]], metric: str) -> float:
    saved = json.loads(Path(source_file).read_text())
    kind = saved["kind"]
    answers = {i["key"]: answer_of(kind, i["result"]) for i in items}
    memo = (str(source_file), json.dumps(sorted(answers.items()), default=str))
    if memo not in _DONE:
        source = Source(saved["task"], Path(saved["data_dir"]), saved["split"], saved["limit"], saved["seed"])
        _DONE[memo] = replay(source, kind, answers)
    return float(_DONE[memo][metric])
