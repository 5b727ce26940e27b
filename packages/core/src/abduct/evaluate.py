"""``abduct eval``: resolve a task and a model, run through the runner, write the outputs."""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from abduct.cache import EmbeddingCache, TextCache, default_cache_dir
from abduct.content import ContentKeys
from abduct.distributed import Ranks, agree, eval_timeout_seconds, gather_objects, process_group
from abduct.engine import ScoringEngine, Timer
from abduct.errors import AbductError
from abduct.generation import GenerationEngine
from abduct.html_report import html_report
from abduct.inputs import InputPolicy
from abduct.io import atomic_write_text, require_dir
from abduct.judging import JudgeEngine
from abduct.metric_info import declared_info, resolve
from abduct.models import LoadedModel, load_model
from abduct.outdir import check_finished, ensure_writable_dir, locked
from abduct.plugins import Registry, get_registry
from abduct.protocols import DualEncoder
from abduct.provenance import abduct_sources, file_hashes, package_versions
from abduct.records import FEATURES
from abduct.report import markdown_report
from abduct.runner import PARTIAL_DIR, Run, seed_everything
from abduct.spec import Settings, Spec
from abduct.tasks import Evaluation, Task

T = TypeVar("T")


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

    @property
    def settings(self) -> Settings:
        return Settings(device=self.device, batch_size=self.batch_size, seed=self.seed)


def load_task(spec: Spec | str, registry: Registry | None = None, settings: Settings | None = None) -> Task:
    spec = Spec.parse(spec) if isinstance(spec, str) else spec
    task = (registry or get_registry()).create("task", spec, settings)
    if not isinstance(task, Task):
        raise AbductError(f"task '{spec.name}' does not implement the Task protocol")
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
    cached = config.use_cache and hasattr(loaded.model, "fingerprint")
    engine = GenerationEngine(
        loaded.model, decoding=replace(loaded.decoding, seed=0), batch_size=config.batch_size,
        cache=TextCache(config.cache_dir or default_cache_dir(), loaded.fingerprint) if cached else None,
        quiet=config.quiet, policy=InputPolicy(loaded.model, f"judge {name}", FEATURES),
    )
    return JudgeEngine(engine, str(loaded.spec), loaded.fingerprint)


def _check_resume(out_dir: Path, signature: dict[str, Any]) -> bool:
    """True when ``out_dir`` holds an unfinished run of this same configuration."""
    marker = out_dir / PARTIAL_DIR / "run.json"
    if not marker.exists():
        return False
    previous = json.loads(marker.read_text())
    if previous != signature:
        differs = ", ".join(k for k in signature if previous.get(k) != signature[k])
        raise AbductError(
            f"{out_dir} holds an unfinished run with a different {differs}; "
            "use another --out or delete that directory"
        )
    return True


def build_run(config: EvalConfig, task: Task, loaded: LoadedModel, registry: Registry, split: str,
              ranks: Ranks | None = None) -> Run:
    """The run's engines for the model's abilities, sharing one input policy, one timer and
    one set of content keys; caches only for models that say what they are (a fingerprint)."""
    name = loaded.spec.name
    policy = InputPolicy(loaded.model, name, getattr(task, "optional_inputs", ()))
    keys, timer, ranks = ContentKeys(), Timer(), ranks or Ranks()
    cached = config.use_cache and hasattr(loaded.model, "fingerprint")
    root = config.cache_dir or default_cache_dir()
    scoring = generation = None
    if loaded.scores:
        cache = EmbeddingCache(root, loaded.fingerprint) if cached and isinstance(loaded.model, DualEncoder) else None
        scoring = ScoringEngine(loaded.model, batch_size=config.batch_size, cache=cache, quiet=config.quiet,
                                policy=policy, keys=keys, timer=timer, ranks=ranks)
    if loaded.generates:
        generation = GenerationEngine(loaded.model, decoding=loaded.decoding, batch_size=config.batch_size,
                                      cache=TextCache(root, loaded.fingerprint) if cached else None,
                                      quiet=config.quiet, policy=policy, keys=keys, timer=timer, ranks=ranks)
    judge = build_judge(config, registry)
    signature = _signature(config, split, loaded.fingerprint)
    if loaded.generates:
        signature["decoding"] = loaded.decoding.describe()
    if judge is not None:
        signature["judge"] = {"spec": judge.spec, "fingerprint": judge.fingerprint}
    return Run(data_dir=config.data_dir, split=split, scoring=scoring, generation=generation, judge=judge,
               model_name=name, settings=config.settings, registry=registry, limit=config.limit, quiet=config.quiet,
               out_dir=config.out_dir, signature=signature, ranks=ranks)


def run_evaluation(config: EvalConfig, registry: Registry | None = None) -> dict[str, Any]:
    """Evaluate and write results.json, predictions.jsonl, report.md and report.html into
    ``out_dir``. Under torchrun every rank calls this: the engines split the model's work,
    and rank 0 alone writes the outputs (the other ranks return the same results)."""
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
def _removed_if_left_empty(out_dir: Path, created: bool) -> Iterator[None]:
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
    split = config.split or task.default_split
    created = not config.out_dir.exists()
    _on_main(ranks, lambda: ensure_writable_dir(config.out_dir))
    with _removed_if_left_empty(config.out_dir, created and ranks.is_main), \
            locked(config.out_dir) if ranks.is_main else contextlib.nullcontext():
        _on_main(ranks, lambda: check_finished(config.out_dir, _identity(config, split), config.overwrite))
        seed_everything(config.seed)
        loaded = load_model(config.model, config.settings, registry)
        run = build_run(config, task, loaded, registry, split, ranks)
        assert run.signature is not None
        signature = run.signature
        resumed = bool(_on_main(ranks, lambda: _check_resume(config.out_dir, signature)))

        evaluation = task.evaluate(run)
        _check_outcome(config, split, evaluation)
        engine = run.scoring or run.generation
        policy = engine.policy if engine is not None else None
        metric_info, undeclared = resolve(declared_info(task, evaluation.metric_info), evaluation.metrics)
        results: dict[str, Any] = {
            "task": config.task,
            "model": {"spec": str(loaded.spec), "fingerprint": loaded.fingerprint, "abilities": loaded.abilities},
            "data": {"dir": str(config.data_dir), "files": file_hashes(evaluation.data_files, config.data_dir)},
            "split": split,
            "seed": config.seed,
            "limit": config.limit,
            "limit_unit": run.limit_unit,
            "inputs": {"ignored": sorted(policy.ignored) if policy is not None else []},
            "metrics": evaluation.metrics,
            "metric_info": metric_info,
            "details": evaluation.details,
            "versions": package_versions(),
            "sources": abduct_sources(),
            "resumed": resumed,
            "processes": ranks.world,
            "timings": {
                "total_seconds": time.perf_counter() - started,
                "model_seconds": engine.timer.seconds if engine is not None else 0.0,
                "stages": run.timings,
            },
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        if undeclared:  # the task's metric_info is incomplete: say so rather than guess a direction
            results["undeclared_metrics"] = undeclared
        if loaded.generates:
            results["model"]["decoding"] = loaded.decoding.describe()
        if run.judge is not None:
            results["judge"] = run.judge.describe()
        gather_objects(None, ranks)  # every rank has finished its units before rank 0 tidies up
        if ranks.is_main:
            write_outputs(config.out_dir, results, evaluation.predictions)
            run.discard_partial()
    return results


def _check_outcome(config: EvalConfig, split: str, evaluation: Evaluation) -> None:
    """No outputs for a run that evaluated nothing or computed a non-number: one line instead."""
    if not evaluation.predictions:
        raise AbductError(f"{config.task}: nothing to evaluate in {config.data_dir} (split '{split}'): "
                          "the data holds no examples")
    for name, value in _numbers(evaluation.metrics):
        if not math.isfinite(value):
            raise AbductError(f"{config.task}: metric '{name}' came out {value} on {config.data_dir} "
                              f"(split '{split}'); no outputs written")


def _numbers(values: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, float]]:
    for key, value in values.items():
        if isinstance(value, dict):
            yield from _numbers(value, f"{prefix}{key}.")
        elif isinstance(value, float):
            yield f"{prefix}{key}", value


def write_outputs(out_dir: Path, results: dict[str, Any], predictions: list[dict[str, Any]]) -> None:
    """Render every output first (a failure leaves nothing new behind), then write each
    atomically, results.json last: its presence marks a finished run."""
    texts = {
        "predictions.jsonl": "".join(json.dumps(r, allow_nan=False) + "\n" for r in predictions),
        "report.md": markdown_report(results),
        "report.html": html_report(results, predictions, out_dir),
        "results.json": json.dumps(results, indent=2, allow_nan=False) + "\n",
    }
    for name, text in texts.items():
        atomic_write_text(out_dir / name, text)
