"""``abduct eval``: resolve a task and a model, run through the runner, write the outputs."""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from abduct._declare.metrics import declared_info, resolve
from abduct._declare.traits import task_traits
from abduct._engine.judging import JudgeEngine
from abduct._engine.models import LoadedModel, engine_for, load_model
from abduct._registry.registry import Registry, get_registry
from abduct._run.examples import build_dataset
from abduct._run.outdir import check_finished, locked, publish_folder
from abduct._run.provenance import abduct_sources, file_hashes, package_versions
from abduct._run.runner import PARTIAL_DIR, RepairWarning, Run, shard_files, stored_units, units_phrase
from abduct._run.shards import FORMAT as SHARD_FORMAT
from abduct._run.shards import Parts, Shard, check_not_a_shard, check_shard_out, write_shard
from abduct._run.staged import evaluate_shard, evaluate_task, sample_view
from abduct._stats.resampling import RESAMPLES, interval
from abduct._stats.unitsfile import UNITS_FILE, checked, encode
from abduct.contract.errors import AbductError, PluginError
from abduct.contract.records import FEATURES
from abduct.contract.spec import Settings, Spec
from abduct.contract.task import Evaluation, Task
from abduct.contract.units import UnitScores
from abduct.kit.cache import default_cache_dir
from abduct.kit.distributed import (
    Ranks,
    agree,
    eval_timeout_seconds,
    gather_objects,
    launched_world,
    process_group,
    seed_everything,
)
from abduct.kit.io import atomic_write_bytes, ensure_writable_dir, require_dir
from abduct.legacy import LegacyTask

T = TypeVar("T")
SampleView = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]  # a task's view of one record


@dataclass(frozen=True)
class EvalConfig:
    task: str
    model: str
    data_dir: Path
    out_dir: Path
    split: str | None = None
    limit: int | None = None
    seed: int = 0
    batch_size: int = 64
    device: str = "cpu"
    quiet: bool = False
    cache_dir: Path | None = None
    use_cache: bool = True
    judge: str | None = None
    overwrite: bool = False
    datasets: tuple[str, ...] = ()  # dataset specs whose options apply when the task loads them
    ci_resamples: int = RESAMPLES  # bootstrap resamples per metric interval; 0: no intervals
    shard: Shard | None = None  # evaluate only this shard's share, into --out, for abduct merge

    @property
    def settings(self) -> Settings:
        return Settings(device=self.device, batch_size=self.batch_size, seed=self.seed)


def load_task(spec: Spec | str, registry: Registry | None = None, settings: Settings | None = None
              ) -> Task | LegacyTask:
    spec = Spec.parse(spec) if isinstance(spec, str) else spec
    task = (registry or get_registry()).create("task", spec, settings)
    if not isinstance(task, (Task, LegacyTask)):
        raise AbductError(f"task '{spec.name}' does not implement the Task protocol (dataset, plan, finish)")
    return task


def _signature(config: EvalConfig, split: str, fingerprint: str) -> dict[str, Any]:
    return {
        "task": config.task,
        "model": config.model,
        "model_fingerprint": fingerprint,
        "data_dir": str(config.data_dir.resolve()),
        "split": split,
        "limit": config.limit,
        "seed": config.seed,
    }


def build_judge(config: EvalConfig, registry: Registry) -> JudgeEngine | None:
    """The ``--judge`` model as a judge: it must generate, and it decodes greedily (its own
    seed fixed, so that a judgment is the same in every run); it sees what it can of the
    judged items (a text-only judge reads just the prompt)."""
    if config.judge is None:
        return None
    loaded = load_model(config.judge, config.settings, registry)
    name = loaded.spec.name
    if not loaded.generates:
        raise AbductError(f"--judge {loaded.spec}: model '{name}' does not generate, and a judge answers in text")
    if loaded.decoding.do_sample:
        raise AbductError(f"--judge {loaded.spec}: a judge decodes greedily (temperature 0); drop do_sample")
    engines = engine_for(loaded, config.settings, optional_inputs=FEATURES, cache_dir=config.cache_dir,
                         use_cache=config.use_cache, quiet=config.quiet, label=f"judge {name}",
                         decoding=replace(loaded.decoding, seed=0))
    assert engines.generation is not None
    return JudgeEngine(engines.generation, str(loaded.spec), loaded.fingerprint)


def _resumable_part(signature: dict[str, Any]) -> dict[str, Any]:
    """What must match to resume: the models' fingerprints, not their spec text, so a model that
    declares its fingerprint may be resumed with other transport settings (``retries=10``)."""
    kept = {k: v for k, v in signature.items() if k != "model"}
    if isinstance(kept.get("judge"), dict):
        kept["judge"] = kept["judge"].get("fingerprint")
    return kept


def _check_resume(out_dir: Path, signature: dict[str, Any], overwrite: bool = False) -> bool:
    """True when ``out_dir`` holds an unfinished run of this same configuration. Stored units
    of a run that cannot be told (no ``run.json``, or one that does not parse) are said in one
    warning and removed; another configuration's are refused, or with ``overwrite`` said and removed."""
    partial = out_dir / PARTIAL_DIR
    marker = partial / "run.json"
    if not partial.is_dir():
        return False
    try:
        previous = json.loads(marker.read_text(encoding="utf-8"))
        problem = None if isinstance(previous, dict) else f"{marker} does not hold a run's configuration"
    except FileNotFoundError:
        previous, problem = None, f"{partial} has no run.json"
    except (ValueError, OSError):
        previous, problem = None, f"{marker} does not parse"
    kept = stored_units(partial)
    if problem is not None:
        if kept:
            warnings.warn(f"{problem}, so which run stored the {units_phrase(kept)} there is unknown; removed, "
                          f"{'it is' if kept == 1 else 'they are'} computed again", RepairWarning, stacklevel=2)
        elif marker.exists() or shard_files(partial):
            warnings.warn(f"{problem}, and no unit there can be read; removed", RepairWarning, stacklevel=2)
        shutil.rmtree(partial, ignore_errors=True)
        return False
    if _resumable_part(previous) != _resumable_part(signature):
        differs = ", ".join(k for k in signature if previous.get(k) != signature[k]) or "configuration"
        if not overwrite:
            raise AbductError(f"{out_dir} holds an unfinished run with a different {differs} ({units_phrase(kept)} in "
                              f"{partial}); use another --out, or --overwrite to discard it")
        warnings.warn(f"--overwrite: {partial} held an unfinished run with a different {differs} "
                      f"({units_phrase(kept)}); removed", RepairWarning, stacklevel=2)
        shutil.rmtree(partial, ignore_errors=True)
        return False
    return True


def _dataset_options(config: EvalConfig, task: Task | LegacyTask, registry: Registry) -> dict[str, dict[str, str]]:
    """``--dataset NAME[,key=value...]``: each checked now (name and options), used when the task
    loads it; a dataset the task does not read is refused rather than ignored."""
    options = {}
    for text in config.datasets:
        spec = Spec.parse(text)
        registry.create("dataset", spec, config.settings)
        if isinstance(task, Task) and spec.name != task.dataset:
            raise AbductError(f"--dataset {spec}: task '{Spec.parse(config.task).name}' reads dataset "
                              f"'{task.dataset}', not '{spec.name}'")
        options[spec.name] = spec.option_dict()
    return options


def dataset_of(task_spec: str, datasets: tuple[str, ...] = (), registry: Registry | None = None) -> Any:
    """The dataset a declaring task reads, built with the options of ``datasets`` (``--dataset``)."""
    registry = registry or get_registry()
    task = load_task(task_spec, registry)
    if not isinstance(task, Task):
        raise AbductError(f"task '{Spec.parse(task_spec).name}' declares no dataset (it defines the deprecated "
                          "evaluate); use its own check command")
    config = EvalConfig(task=task_spec, model="", data_dir=Path(), out_dir=Path(), datasets=datasets)
    return build_dataset(task, _dataset_options(config, task, registry).get(task.dataset), registry)


def build_run(config: EvalConfig, task: Task | LegacyTask, loaded: LoadedModel, registry: Registry, split: str,
              ranks: Ranks) -> Run:
    """The run's engines for the model's abilities, sharing one input policy, one timer and
    one set of content keys; caches only for models that say what they are (a fingerprint)."""
    engines = engine_for(loaded, config.settings, optional_inputs=task_traits(task, config.task).optional_inputs,
                         cache_dir=config.cache_dir, use_cache=config.use_cache, quiet=config.quiet, ranks=ranks)
    judge = build_judge(config, registry)
    signature = _signature(config, split, loaded.fingerprint)
    if loaded.generates:
        signature["decoding"] = loaded.decoding.describe()
    if judge is not None:
        signature["judge"] = {"spec": judge.spec, "fingerprint": judge.fingerprint}
    datasets = _dataset_options(config, task, registry)
    if config.shard is not None:  # a shard's stored units resume only that shard of that run
        signature.update(shard=str(config.shard), datasets=datasets)
    return Run(data_dir=config.data_dir, split=split, scoring=engines.scoring, generation=engines.generation,
               judge=judge, model_name=loaded.spec.name, settings=config.settings, registry=registry,
               limit=config.limit, quiet=config.quiet, out_dir=config.out_dir,
               cache_dir=(config.cache_dir or default_cache_dir()) if config.use_cache else None,
               signature=signature, ranks=ranks, datasets=datasets)


def run_evaluation(config: EvalConfig, registry: Registry | None = None) -> dict[str, Any]:
    """Evaluate and write results.json, predictions.jsonl, report.md and report.html into
    ``out_dir``. Under torchrun every rank calls this: the engines split the model's work,
    and rank 0 alone writes the outputs (the other ranks return the same results). With
    ``config.shard``, ``out_dir`` receives that shard's records and manifest for ``abduct merge``
    (one process per shard: refused under torchrun)."""
    if config.shard is not None and launched_world() > 1:
        raise AbductError(f"--shard {config.shard} splits a run across machines and torchrun across the "
                          f"{launched_world()} processes of one: use one of them (one process per shard, more shards "
                          "for more GPUs)")
    with process_group(eval_timeout_seconds()) as ranks:
        return _evaluate(config, registry or get_registry(), ranks)


def _identity(config: EvalConfig, split: str) -> dict[str, Any]:
    return {"task": config.task, "model": str(Spec.parse(config.model)), "split": split,
            "data_dir": str(config.data_dir), "limit": config.limit, "seed": config.seed}


def _on_main(ranks: Ranks, check: Callable[[], T]) -> T | None:
    """``check()`` on rank 0, its one-line error raised on every rank (none waits for a rank
    that gave up)."""
    value, error = None, None
    if ranks.is_main:
        try:
            value = check()
        except AbductError as exc:
            error = str(exc)
    agree(error, ranks)
    return value


@contextlib.contextmanager
def removed_if_left_empty(out_dir: Path, created: bool) -> Iterator[None]:
    """A run that fails before storing anything leaves no ``--out`` it created (a bad model
    spec, say, is found after ``--out`` was checked); one with stored units keeps them to resume."""
    try:
        yield
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                out_dir.rmdir()  # only when empty
        raise


def _evaluate(config: EvalConfig, registry: Registry, ranks: Ranks) -> dict[str, Any]:
    started = time.perf_counter()
    require_dir(config.data_dir, "data directory")
    if config.cache_dir is not None and config.use_cache:
        ensure_writable_dir(config.cache_dir, "--cache-dir")
    task = load_task(config.task, registry, config.settings)
    name, shard = Spec.parse(config.task).name, config.shard
    if shard is not None and not isinstance(task, Task):
        raise AbductError(f"task '{name}' defines the deprecated evaluate(run), which cannot be split into shards; "
                          "--shard needs a task that declares dataset, plan() and finish()")
    split = config.split or task.default_split
    created = not config.out_dir.exists()
    _on_main(ranks, lambda: ensure_writable_dir(config.out_dir))
    with removed_if_left_empty(config.out_dir, created and ranks.is_main), \
            locked(config.out_dir) if ranks.is_main else contextlib.nullcontext():
        _on_main(ranks, lambda: check_finished(config.out_dir, _identity(config, split), config.overwrite,
                                               keep_partial=True))  # _check_resume decides on the units
        if shard is not None:
            _on_main(ranks, lambda: check_shard_out(config.out_dir, _shard_identity(config, split, shard),
                                                    config.overwrite))
        else:
            _on_main(ranks, lambda: check_not_a_shard(config.out_dir, config.overwrite))
        seed_everything(config.seed)
        loaded = load_model(config.model, config.settings, registry)
        run = build_run(config, task, loaded, registry, split, ranks)
        assert run.signature is not None
        signature = run.signature
        resumed = bool(_on_main(ranks, lambda: _check_resume(config.out_dir, signature, config.overwrite)))

        if shard is not None:
            assert isinstance(task, Task)  # a legacy task was refused above
            parts = evaluate_shard(task, run, name, shard)
            return _write_shard(config, split, shard, loaded, run, parts, resumed, started)
        traits = task_traits(task, config.task)
        outcome = evaluate_task(task, run, traits, name)
        evaluation = outcome.evaluation
        check_outcome(config.task, config.data_dir, split, evaluation)
        about = {"task": config.task, "model": model_block(loaded), "split": split, "seed": config.seed,
                 "limit": config.limit, "limit_unit": run.limit_unit, "ignored": _ignored(run)}
        results, units, interval_seconds = results_of(task, evaluation, about, config.data_dir, config.ci_resamples)
        results.update({**_run_facts(run, resumed, started, interval_seconds=interval_seconds),
                        "created": datetime.now(UTC).isoformat(timespec="seconds")})
        add_tail(results, run.judge.describe() if run.judge is not None else None)
        gather_objects(None, ranks)  # every rank has finished its units before rank 0 tidies up
        if ranks.is_main:
            thumbnails = run.cache_dir / "thumbnails" if run.cache_dir is not None else None
            write_outputs(config.out_dir, results, evaluation.predictions, run.artifacts, units,
                          sample_view(traits, outcome.examples), thumbnails, registry)
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
        "timings": {
            "total_seconds": time.perf_counter() - started,
            "model_seconds": engine.timer.seconds if engine is not None else 0.0,
            **timings,
            "stages": run.timings,
        },
    }


def results_of(task: Task | LegacyTask, evaluation: Evaluation, about: dict[str, Any], data_dir: Path,
               ci_resamples: int, data_label: str | None = None) -> tuple[dict[str, Any], dict[str, UnitScores], float]:
    """results.json as far as the evaluation makes it (``about``: task, model, split, seed,
    limit, limit_unit and the inputs the model went without), its units by metric and the
    seconds the intervals took; the data files are hashed under ``data_dir`` and the data named
    ``data_label`` (default: ``data_dir``). A whole run and ``abduct merge`` both write through here."""
    units = checked(evaluation.units, dict(_numbers(evaluation.metrics)), f"task '{about['task']}'")
    intervals, interval_seconds = _intervals(units, ci_resamples, about["seed"])
    metric_info, undeclared = resolve(declared_info(task_traits(task).metric_info, evaluation.metric_info),
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


def model_block(loaded: LoadedModel) -> dict[str, Any]:
    """results.json's ``model``: spec, fingerprint, abilities, and decoding for a generator."""
    model: dict[str, Any] = {"spec": str(loaded.spec), "fingerprint": loaded.fingerprint, "abilities": loaded.abilities}
    if loaded.generates:
        model["decoding"] = loaded.decoding.describe()
    return model


def add_tail(results: dict[str, Any], judge: dict[str, Any] | None) -> None:
    """The undeclared metrics and the judge's block last, where results.json has always had them."""
    if "undeclared_metrics" in results:
        results["undeclared_metrics"] = results.pop("undeclared_metrics")
    if judge is not None:
        results["judge"] = judge


def _shard_identity(config: EvalConfig, split: str, shard: Shard) -> dict[str, Any]:
    """What a rerun of a shard into its folder must repeat (else it is refused, as a finished run's)."""
    return {**_identity(config, split), "shard": str(shard)}


def _write_shard(config: EvalConfig, split: str, shard: Shard, loaded: LoadedModel, run: Run,
                 parts: dict[str, Parts], resumed: bool, started: float) -> dict[str, Any]:
    """A finished shard: its records and its manifest (rank 0), the stored units let go. The
    manifest says all that ``abduct merge`` needs besides the dataset: no model is loaded there."""
    manifest: dict[str, Any] = {
        "format": SHARD_FORMAT,
        "shard": {"index": shard.index, "count": shard.count},
        "run": _shard_identity(config, split, shard),
        "task": str(Spec.parse(config.task)),
        "task_text": config.task,
        "model": model_block(loaded),
        "model_name": loaded.spec.name,
        "data": {"dir": str(config.data_dir), "resolved": str(config.data_dir.resolve()),
                 "files": file_hashes(run.data_files, config.data_dir)},
        "datasets": run.datasets,
        "split": split,
        "seed": config.seed,
        "batch_size": config.batch_size,
        "limit": config.limit,
        "limit_unit": run.limit_unit,
        "ci_resamples": config.ci_resamples,
        "inputs": {"ignored": _ignored(run)},
        "judge": run.judge.describe() if run.judge is not None else None,
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
    """Render every output first (a failure leaves nothing new behind), then write each
    atomically, results.json last: its presence marks a finished run. units.json holds each
    metric's per-unit data (``abduct compare`` pairs runs on it). A task's artifacts come first,
    so a finished run always has them. The pages (report.md, report.html, samples.html and its
    thumbnails, from abduct-report) come from the plugins' ``render_run_pages`` hook; their
    folders are published before the pages that point into them."""
    texts: dict[str, str | bytes] = {
        **{name: content if isinstance(content, bytes) else json.dumps(content, indent=2, allow_nan=False) + "\n"
           for name, content in (artifacts or {}).items()},
        "predictions.jsonl": "".join(json.dumps(r, allow_nan=False) + "\n" for r in predictions),
        UNITS_FILE: json.dumps(encode(units or {}), allow_nan=False) + "\n",
    }
    pages = (registry or get_registry()).run_pages(results=results, predictions=predictions, out_dir=out_dir,
                                                   sample_view=sample_view, cache_dir=thumbnail_cache)
    for rendered in pages:
        taken = sorted(set(rendered.files) & {*texts, "results.json"})
        if taken:
            raise PluginError(f"a render_run_pages hook returned {taken[0]}, which the core writes")
        texts.update(rendered.files)
    for name, folder in (folder for rendered in pages for folder in rendered.folders.items()):
        publish_folder(out_dir, name, folder)
    texts["results.json"] = json.dumps(results, indent=2, allow_nan=False) + "\n"
    for name, text in texts.items():
        atomic_write_bytes(out_dir / name, text if isinstance(text, bytes) else text.encode("utf-8"))
