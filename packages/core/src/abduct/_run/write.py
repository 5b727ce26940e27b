"""What a run writes when its stages are done: results.json (with each metric's interval),
predictions.jsonl, units.json, the task's artifacts and the plugins' pages, results.json last;
or, for a shard, its records and manifest. A whole run and ``abduct merge`` write through here."""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from abduct._declare.metrics import declared_info, resolve
from abduct._declare.traits import TaskTraits, input_facts
from abduct._engine.judging import judges_block
from abduct._engine.models import LoadedModel
from abduct._registry.registry import Registry, get_registry
from abduct._run.collect import EvalConfig, Prepared
from abduct._run.outdir import replace_outputs
from abduct._run.provenance import abduct_sources, file_hashes, package_versions
from abduct._run.runner import Run
from abduct._run.shards import FORMAT as SHARD_FORMAT
from abduct._run.shards import Parts, Shard, write_shard
from abduct._stats.resampling import interval
from abduct._stats.unitsfile import UNITS_FILE, checked, encode
from abduct.contract.errors import AbductError, PluginError
from abduct.contract.spec import Spec
from abduct.contract.task import Evaluation
from abduct.contract.units import UnitScores
from abduct.kit.distributed import gather_objects

SampleView = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]  # a task's view of one record


def finished_run(run: Run, loaded: LoadedModel, evaluation: Evaluation, traits: TaskTraits, about: dict[str, Any], resumed: bool,
                 started: float, ci_resamples: int, sample_view: SampleView | None,
                 registry: Registry) -> dict[str, Any]:
    """A whole run's results (every rank), its outputs written by rank 0 and its stored units let go."""
    check_outcome(about["task"], run.data_dir, run.split, evaluation)
    label = about.get("label")
    about = {"task": about["task"], "model": model_block(loaded, label), **about, "limit_unit": run.limit_unit,
             "ignored": _ignored(run)}
    results, units, interval_seconds = results_of(traits, evaluation, about, run.data_dir, ci_resamples)
    results.update({**_run_facts(run, resumed, started, interval_seconds=interval_seconds),
                    "created": datetime.now(UTC).isoformat(timespec="seconds")})
    add_tail(results, judges_block(run.judge, run.other_judges))
    gather_objects(None, run.ranks)  # every rank has finished its units before rank 0 tidies up
    if run.ranks.is_main:
        assert run.out_dir is not None
        thumbnails = run.cache_dir / "thumbnails" if run.cache_dir is not None else None
        write_outputs(run.out_dir, results, evaluation.predictions, run.artifacts, units, sample_view, thumbnails,
                      registry)
        run.discard_partial()
    return results


def _ignored(run: Run) -> list[str]:
    """The inputs the model went without (the task allows it), as results.json lists them."""
    engine = run.scoring or run.generation
    return sorted(engine.policy.ignored) if engine is not None else []


def _run_facts(run: Run, resumed: bool, started: float, **timings: float) -> dict[str, Any]:
    """What results.json and a shard's manifest say of the run itself: ``resumed_units`` (of all
    the units of every stage, ``of``, how many an earlier, interrupted run into the same ``--out``
    had finished, ``kept``: not computed again), its processes, and its seconds (``timings``
    after the model's)."""
    engine = run.scoring or run.generation
    return {
        "resumed": resumed,
        "resumed_units": {"kept": run.units_kept, "of": run.units_total},
        "processes": run.ranks.world,
        "tokens": run.ledger(),
        "timings": {
            "total_seconds": time.perf_counter() - started,
            "model_seconds": engine.timer.seconds if engine is not None else 0.0,
            **timings,
            "stages": run.timings,
        },
    }


def results_of(traits: TaskTraits, evaluation: Evaluation, about: dict[str, Any], data_dir: Path,
               ci_resamples: int, data_label: str | None = None) -> tuple[dict[str, Any], dict[str, UnitScores], float]:
    """results.json as far as the evaluation makes it (``about``: task, model, split, seed,
    limit, limit_unit and the inputs the model went without), its units by metric and the
    seconds the intervals took; the data files are hashed under ``data_dir`` and the data named
    ``data_label`` (default: ``data_dir``). A whole run and ``abduct merge`` both write through here."""
    units = checked(evaluation.units, dict(_numbers(evaluation.metrics)), f"task '{about['task']}'")
    intervals, interval_seconds = _intervals(units, ci_resamples, about["seed"])
    metric_info, undeclared = resolve(declared_info(traits.metric_info, evaluation.metric_info),
                                      evaluation.metrics)
    results: dict[str, Any] = {
        "task": about["task"],
        "model": about["model"],
        "data": {"dir": str(data_dir) if data_label is None else data_label,
                 "files": file_hashes(evaluation.data_files, data_dir)},
        "split": about["split"],
        "seed": about["seed"],
        "limit": about["limit"],
        "limit_unit": about["limit_unit"],
        "inputs": {"ignored": about["ignored"]},
        "metrics": evaluation.metrics,
        "metric_info": metric_info,
        "intervals": intervals,
        "details": evaluation.details,
        "versions": package_versions(),
        "sources": abduct_sources(),
    }
    if undeclared:  # the task's metric_info is incomplete: say so rather than guess a direction
        results["undeclared_metrics"] = undeclared
    return results, units, interval_seconds


def model_block(loaded: LoadedModel, label: str | None = None) -> dict[str, Any]:
    """results.json's ``model``: spec, the run's ``label`` (``--label``, else ``default_label``),
    fingerprint, abilities, decoding for a generator, and ``inputs``: what the model says shaped
    its inputs (``describe_inputs``, read now that it has run), where it says anything."""
    model: dict[str, Any] = {"spec": str(loaded.spec), "label": label or default_label(loaded.spec),
                             "fingerprint": loaded.fingerprint, "abilities": loaded.abilities}
    if loaded.generates:
        model["decoding"] = loaded.decoding.describe()
    facts = input_facts(loaded.model, loaded.spec.name)
    if facts is not None:
        model["inputs"] = facts
    return model


def default_label(spec: Spec) -> str:
    """A run's name when ``--label`` gives none: its spec without the options whose value is a URL
    (``openai:MODEL,base_url=http://...`` is ``openai:MODEL``): where a model is served is not what it is."""
    return str(Spec(spec.name, spec.argument, spec.tag, tuple((k, v) for k, v in spec.options if "://" not in v)))


def add_tail(results: dict[str, Any], judge: dict[str, Any] | None) -> None:
    """The undeclared metrics and the judge's block last, where results.json has always had them."""
    if "undeclared_metrics" in results:
        results["undeclared_metrics"] = results.pop("undeclared_metrics")
    if judge is not None:
        results["judge"] = judge


def finished_shard(config: EvalConfig, prepared: Prepared, shard: Shard, run_identity: dict[str, Any],
                   loaded: LoadedModel, run: Run, parts: dict[str, Parts], resumed: bool, started: float
                   ) -> dict[str, Any]:
    """A finished shard: its records and its manifest (rank 0), the stored units let go. The
    manifest says all that ``abduct merge`` needs besides the dataset: no model is loaded there."""
    manifest: dict[str, Any] = {
        "format": SHARD_FORMAT,
        "shard": {"index": shard.index, "count": shard.count, "source": shard.source},
        "run": run_identity,
        "task": str(prepared.spec),
        "task_text": config.task,
        "model": model_block(loaded, config.label),
        "model_name": loaded.spec.name,
        "data": {"dir": str(config.data_dir), "resolved": str(config.data_dir.resolve()),
                 "files": file_hashes(run.data_files, config.data_dir)},
        "datasets": prepared.datasets,
        "split": run.split,
        "seed": config.seed,
        "batch_size": config.batch_size,
        "limit": config.limit,
        "limit_unit": run.limit_unit,
        "ci_resamples": config.ci_resamples,
        "inputs": {"ignored": _ignored(run)},
        "judge": judges_block(run.judge, run.other_judges),
        "stages": {stage: {"elements": len(elements), "records": sum(len(r) for _, r in elements)}
                   for stage, elements in parts.items()},
        **_run_facts(run, resumed, started),
        "versions": package_versions(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    gather_objects(None, run.ranks)  # every rank has finished its units before rank 0 tidies up
    if run.ranks.is_main:
        write_shard(config.out_dir, manifest, parts)
        run.discard_partial()
    return manifest


def check_outcome(task: str, data_dir: Path, split: str, evaluation: Evaluation) -> None:
    """No outputs for a run that evaluated nothing or computed a non-number: one line instead."""
    if not evaluation.predictions:
        raise AbductError(f"{task}: nothing to evaluate in {data_dir} (split '{split}'): "
                          "the data holds no examples")
    for name, value in _numbers(evaluation.metrics):
        if not math.isfinite(value):
            raise AbductError(f"{task}: metric '{name}' came out {value} on {data_dir} "
                              f"(split '{split}'); no outputs written")


def _numbers(values: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, float]]:
    for key, value in values.items():
        if isinstance(value, dict):
            yield from _numbers(value, f"{prefix}{key}.")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield f"{prefix}{key}", float(value)


def _intervals(units: dict[str, UnitScores], resamples: int, seed: int) -> tuple[dict[str, Any], float]:
    """Each metric's interval over its units (``--ci-resamples``, seeded by ``--seed``), and the seconds it took."""
    started = time.perf_counter()
    found = {metric: interval(scores, resamples, seed, metric) for metric, scores in units.items()}
    return {m: i for m, i in found.items() if i is not None}, time.perf_counter() - started


def write_outputs(out_dir: Path, results: dict[str, Any], predictions: list[dict[str, Any]],
                  artifacts: dict[str, Any] | None = None, units: dict[str, UnitScores] | None = None,
                  sample_view: SampleView | None = None, thumbnail_cache: Path | None = None,
                  registry: Registry | None = None) -> None:
    """Render every output first (a failure leaves nothing new behind), then write them beside
    the run already there and swap them in, results.json last: its presence marks a finished
    run, and a finished run is only ever replaced whole (``replace_outputs``). units.json holds each
    metric's per-unit data (``abduct compare`` pairs runs on it). A task's artifacts come first,
    so a finished run always has them. The pages (report.md, report.html, samples.html and its
    thumbnails, from abduct-report) come from the plugins' ``render_run_pages`` hook."""
    texts: dict[str, str | bytes] = {
        **{name: content if isinstance(content, bytes) else json.dumps(content, indent=2, allow_nan=False) + "\n"
           for name, content in (artifacts or {}).items()},
        "predictions.jsonl": "".join(json.dumps(r, allow_nan=False) + "\n" for r in predictions),
        UNITS_FILE: json.dumps(encode(units or {}), allow_nan=False) + "\n",
    }
    pages = (registry or get_registry()).run_pages(results=results, predictions=predictions, out_dir=out_dir,
                                                   sample_view=sample_view, cache_dir=thumbnail_cache)
    folders = {name: folder for rendered in pages for name, folder in rendered.folders.items()}
    for rendered in pages:
        taken = sorted(set(rendered.files) & {*texts, "results.json"})
        if taken:
            for folder in folders.values():  # staged by the renderers: nothing left behind
                shutil.rmtree(folder, ignore_errors=True)
            raise PluginError(f"a render_run_pages hook returned {taken[0]}, which the core writes")
        texts.update(rendered.files)
    if artifacts:  # the task's own files (a submission file, say): results.json and the run's echo name them
        results["artifacts"] = sorted(artifacts)
    texts["results.json"] = json.dumps(results, indent=2, allow_nan=False) + "\n"
    replace_outputs(out_dir, {name: text if isinstance(text, bytes) else text.encode("utf-8")
                              for name, text in texts.items()}, folders)
