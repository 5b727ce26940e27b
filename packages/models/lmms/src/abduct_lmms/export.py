"""``abduct export lmms-eval``: one lmms-eval task folder per abduct task.

``OUT/abduct_<task>/`` holds the task's YAML, ``docs.jsonl`` (the requests abduct's task asks,
recorded from its own loader and prompts, ``replay.record``), ``source.json`` (task, data,
split, limit, seed) and a ``utils.py`` that imports abduct: lmms-eval calls it for the images,
the prompt and the scoring, and its aggregations replay lmms-eval's answers through the task's
own ``evaluate`` (``replay.replay``), so lmms-eval prints abduct's official metrics.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from abduct import AbductError, Decoding
from abduct.kit import atomic_write_text, ensure_writable_dir
from abduct_lmms.replay import Source, record, replay

UTILS = '''"""Written by `abduct export lmms-eval`: lmms-eval's hooks for this task, all abduct's."""
from pathlib import Path

from abduct_lmms.docs import doc_to_target, doc_to_text, doc_to_visual  # noqa: F401
from abduct_lmms.hooks import aggregate, process_results  # noqa: F401

SOURCE = Path(__file__).with_name("source.json")
{aggregations}'''


def task_name(task: str) -> str:
    """``abduct_`` and the task's spec, folded into a name lmms-eval takes (``nleye-triplet`` ->
    ``abduct_nleye_triplet``)."""
    return "abduct_" + re.sub(r"[^0-9a-zA-Z]+", "_", task).strip("_").lower()


def headline_metrics(metrics: dict[str, Any]) -> list[str]:
    """The task's top-level numeric metrics (its category tables stay in abduct's results)."""
    return [k for k, v in metrics.items() if isinstance(v, int | float) and not isinstance(v, bool)]


def _yaml(name: str, kind: str, docs_file: Path, metrics: list[str]) -> str:
    decoding = Decoding()  # abduct eval's defaults: greedy, max_new_tokens
    config: dict[str, Any] = {
        "task": name, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(docs_file)}},
        "test_split": "test", "output_type": kind,
        "doc_to_visual": "!function utils.doc_to_visual", "doc_to_text": "!function utils.doc_to_text",
        "doc_to_target": "!function utils.doc_to_target", "process_results": "!function utils.process_results",
        "metric_list": [{"metric": m, "aggregation": f"!function utils.aggregate_{m}", "higher_is_better": True}
                        for m in metrics],
        "metadata": [{"version": 0.0}],
    }
    if kind == "generate_until":
        config["generation_kwargs"] = {"max_new_tokens": decoding.max_new_tokens, "temperature": 0,
                                       "num_beams": decoding.num_beams, "do_sample": False}
    text = yaml.safe_dump(config, sort_keys=False, width=1000)
    return re.sub(r"'(!function [^']+)'", r"\1", text)  # the tag lmms-eval reads, unquoted


def export_task(source: Source, out_dir: Path) -> str:
    """Write the folder of one task; return its lmms-eval name."""
    kind, docs = record(source)
    if not docs:
        raise AbductError(f"task '{source.task}' asked no model request on {source.data_dir}: nothing to export")
    # the metric names: the task's own, from a replay of its own (empty) answers
    blank: dict[str, Any] = {d["key"]: ("" if kind == "generate_until" else 0.0) for d in docs}
    metrics = headline_metrics(dict(replay(source, kind, blank).metrics))
    name = task_name(source.task)
    folder = ensure_writable_dir(out_dir / name)
    docs_file = (folder / "docs.jsonl").resolve()
    atomic_write_text(docs_file, "".join(json.dumps({"doc_id": i, **d, "metrics": metrics}) + "\n" for i, d in enumerate(docs)))
    atomic_write_text(folder / "source.json", json.dumps(
        {"task": source.task, "data_dir": str(source.data_dir.resolve()), "split": source.split,
         "limit": source.limit, "seed": source.seed, "kind": kind}, indent=2) + "\n")
    aggregations = "".join(f"\n\ndef aggregate_{m}(items):\n    return aggregate(SOURCE, items, {m!r})\n"
                           for m in metrics)
    atomic_write_text(folder / "utils.py", UTILS.format(aggregations=aggregations))
    atomic_write_text(folder / f"{name}.yaml", _yaml(name, kind, docs_file, metrics))
    return name
