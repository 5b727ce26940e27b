"""``abduct export lmms-eval``: one lmms-eval task folder per abduct task.

``OUT/abduct_<task>/`` holds the task's YAML, ``docs.jsonl`` (the requests of the task's plan,
read from its declared stages on its own dataset: no model runs), ``source.json`` (task, data,
split, limit, seed) and a ``utils.py`` that imports abduct: lmms-eval calls it for the images,
the prompt and the scoring, and its aggregations hand lmms-eval's answers to an ordinary run of
the ``replay:FILE`` model (``replay.replay``), so lmms-eval prints abduct's official metrics.

A task exports when every stage of its plan is known before any answer (no ``after=`` stage)
and is one of the shapes lmms-eval asks: ``Generate`` (``generate_until``), or ``Choose`` and
``Compare`` (``loglikelihood`` of each candidate). A task whose plan differs by what the model
can do (NL-EYE triplet asks a generating model, scores with a scoring one) exports as
generation when it can. Its inputs must be ones a document carries (``docs.inexpressible``):
images, regions, context and related inputs, and videos as whole files, named by path as
lmms-eval's own video tasks name theirs; a video with time spans (VAR) is refused in one line.
Media are named as the task's dataset gives them under ``--data``, which the command makes
absolute: the folder works where the data was when it was exported.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import yaml

from abduct import AbductError, Choose, Compare, Decoding, Generate, RunInfo, Settings, Spec, VisualInput
from abduct.host import get_registry, load_examples, task_traits
from abduct.kit import atomic_write_text
from abduct_lmms.docs import generation_doc, inexpressible, scoring_doc
from abduct_lmms.replay import DOCUMENT_INPUTS, KINDS, Source, replay

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


class Inexpressible(AbductError):
    """An input no lmms-eval document can carry, whatever kind of request asks it."""


def _as_asked(visual: VisualInput, optional: frozenset[str], task: str) -> VisualInput:
    """``visual`` as the run trims it for ``replay:``, which takes ``DOCUMENT_INPUTS`` (so keys
    match); AbductError when a document cannot carry it."""
    extra = visual.features() - DOCUMENT_INPUTS
    if extra - optional:
        raise AbductError(f"task '{task}' gives {', '.join(sorted(extra - optional))} inputs, which lmms-eval's "
                          "models do not take")
    asked = visual.without(frozenset(extra)) if extra else visual
    problem = inexpressible(asked)
    if problem is not None:
        raise Inexpressible(f"task '{task}' cannot be exported: it gives {problem}, which an lmms-eval document "
                            "cannot carry")
    return asked


def planned_docs(source: Source, kind: str) -> list[dict[str, Any]]:
    """The documents of the task's plan as a model of ``kind`` would be asked them, in order,
    each request once; AbductError when the plan asks something else or waits on answers."""
    registry, settings = get_registry(), Settings(seed=source.seed)
    prepared, collected = load_examples(source.task, source.data_dir, source.split, source.limit, registry=registry,
                                        settings=settings)
    task, name = prepared.task, prepared.spec.name
    known = RunInfo(split=prepared.split, model_name="lmms-eval", scores=kind == "loglikelihood",
                    generates=kind == "generate_until", judged=False,
                    metric=lambda metric, **options: registry.create("metric", Spec(metric), settings, **options),
                    settings=settings, corpus=collected.corpus)
    optional = prepared.traits.optional_inputs
    docs: dict[str, dict[str, Any]] = {}
    for stage in task.plan(collected.examples, known):
        request = stage.request
        if request is None:
            raise AbductError(f"task '{name}': stage '{stage.name}' is built from earlier answers, and lmms-eval asks "
                              "every request up front; this task cannot be exported")
        if isinstance(request, Generate) and kind == "generate_until":
            found = [generation_doc(replace(i.request, visual=_as_asked(i.request.visual, optional, name)))
                     for i in request.items]
        elif isinstance(request, Choose) and kind == "loglikelihood":
            found = [scoring_doc(_as_asked(i.visual, optional, name), c) for i in request.items for c in i.candidates]
        elif isinstance(request, Compare) and kind == "loglikelihood":
            found = [scoring_doc(_as_asked(c.visual, optional, name), c.text)
                     for i in request.items for c in (i.first, i.second)]
        else:
            raise AbductError(f"task '{name}': stage '{stage.name}' asks {type(request).__name__}, which a "
                              f"{kind} export cannot ask")
        docs.update((d["key"], d) for d in found)
    return list(docs.values())


def planned(source: Source) -> tuple[str, list[dict[str, Any]]]:
    """The kind the task is exported as (generation when its plan allows) and its documents."""
    problems = []
    for kind in KINDS:
        try:
            return kind, planned_docs(source, kind)
        except Inexpressible:
            raise
        except AbductError as exc:
            problems.append(str(exc))
    raise AbductError(problems[0] if problems[0] == problems[-1] else f"{problems[0]}; as log-likelihoods: {problems[1]}")


def headline_metrics(metrics: dict[str, Any]) -> list[str]:
    """The task's top-level numeric metrics (its category tables stay in abduct's results)."""
    return [k for k, v in metrics.items() if isinstance(v, int | float) and not isinstance(v, bool)]


def higher_is_better(task: str, metrics: list[str]) -> dict[str, bool]:
    """lmms-eval's arrow for each metric from the task's declarations: False for lower-is-better
    metrics and for counts (``n``, ``unparsed``: neither better nor worse), True otherwise."""
    declared = task_traits(get_registry().create("task", task, Settings()), Spec.parse(task).name).metric_info
    out = {}
    for metric in metrics:
        info = declared.get(metric) or next((i for key, i in declared.items() if fnmatch(metric, key)), None)
        out[metric] = info is None or info.better == "higher"
    return out


def _yaml(name: str, kind: str, docs_file: Path, metrics: dict[str, bool]) -> str:
    decoding = Decoding()  # abduct eval's defaults: greedy, max_new_tokens
    config: dict[str, Any] = {
        "task": name, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(docs_file)}},
        "test_split": "test", "output_type": kind,
        "doc_to_visual": "!function utils.doc_to_visual", "doc_to_text": "!function utils.doc_to_text",
        "doc_to_target": "!function utils.doc_to_target", "process_results": "!function utils.process_results",
        "metric_list": [{"metric": m, "aggregation": f"!function utils.aggregate_{m}", "higher_is_better": better}
                        for m, better in metrics.items()],
        "metadata": [{"version": 0.0}],
    }
    if kind == "generate_until":
        config["generation_kwargs"] = {"max_new_tokens": decoding.max_new_tokens, "temperature": 0,
                                       "num_beams": decoding.num_beams, "do_sample": False}
    text = yaml.safe_dump(config, sort_keys=False, width=1000)
    return re.sub(r"'(!function [^']+)'", r"\1", text)  # the tag lmms-eval reads, unquoted


def export_task(source: Source, out_dir: Path) -> str:
    """Write the folder of one task; return its lmms-eval name."""
    kind, docs = planned(source)
    if not docs:
        raise AbductError(f"task '{source.task}' asks no model request on {source.data_dir}: nothing to export")
    # the metric names: the task's own, from a replay of blank answers
    blank: dict[str, Any] = {d["key"]: ("" if kind == "generate_until" else 0.0) for d in docs}
    metrics = headline_metrics(replay(source, kind, blank))
    name = task_name(source.task)
    folder = out_dir / name
    folder.mkdir(parents=True, exist_ok=True)  # a refusal: one line naming it (the CLI's OSError)
    docs_file = (folder / "docs.jsonl").resolve()
    atomic_write_text(docs_file, "".join(json.dumps({"doc_id": i, **d, "metrics": metrics}) + "\n" for i, d in enumerate(docs)))
    atomic_write_text(folder / "source.json", json.dumps(
        {"task": source.task, "data_dir": str(source.data_dir.resolve()), "split": source.split,
         "limit": source.limit, "seed": source.seed, "kind": kind}, indent=2) + "\n")
    aggregations = "".join(f"\n\ndef aggregate_{m}(items):\n    return aggregate(SOURCE, items, {m!r})\n"
                           for m in metrics)
    atomic_write_text(folder / "utils.py", UTILS.format(aggregations=aggregations))
    atomic_write_text(folder / f"{name}.yaml", _yaml(name, kind, docs_file, higher_is_better(source.task, metrics)))
    return name
