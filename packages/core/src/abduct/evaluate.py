"""``abduct eval``: resolve a task and a model, run through the runner, write the outputs."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from abduct.cache import EmbeddingCache, TextCache, default_cache_dir
from abduct.content import ContentKeys
from abduct.engine import ScoringEngine, Timer
from abduct.errors import AbductError
from abduct.generation import GenerationEngine
from abduct.inputs import InputPolicy
from abduct.io import atomic_write_json, atomic_write_jsonl, atomic_write_text, require_dir
from abduct.metric_info import declared_info, resolve
from abduct.models import LoadedModel, load_model
from abduct.plugins import Registry, get_registry
from abduct.protocols import DualEncoder
from abduct.provenance import abduct_sources, file_hashes, package_versions
from abduct.report import markdown_report
from abduct.runner import PARTIAL_DIR, Run, seed_everything
from abduct.spec import Settings, Spec
from abduct.tasks import Task


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


def build_run(config: EvalConfig, task: Task, loaded: LoadedModel, registry: Registry, split: str) -> Run:
    """The run's engines for the model's abilities, sharing one input policy, one timer and
    one set of content keys; caches only for models that say what they are (a fingerprint)."""
    name = loaded.spec.name
    policy = InputPolicy(loaded.model, name, getattr(task, "optional_inputs", ()))
    keys, timer = ContentKeys(), Timer()
    cached = config.use_cache and hasattr(loaded.model, "fingerprint")
    root = config.cache_dir or default_cache_dir()
    scoring = generation = None
    if loaded.scores:
        cache = EmbeddingCache(root, loaded.fingerprint) if cached and isinstance(loaded.model, DualEncoder) else None
        scoring = ScoringEngine(loaded.model, batch_size=config.batch_size, cache=cache, quiet=config.quiet,
                                policy=policy, keys=keys, timer=timer)
    if loaded.generates:
        generation = GenerationEngine(loaded.model, decoding=loaded.decoding, batch_size=config.batch_size,
                                      cache=TextCache(root, loaded.fingerprint) if cached else None,
                                      quiet=config.quiet, policy=policy, keys=keys, timer=timer)
    signature = _signature(config, split, loaded.fingerprint)
    if loaded.generates:
        signature["decoding"] = loaded.decoding.describe()
    return Run(data_dir=config.data_dir, split=split, scoring=scoring, generation=generation, model_name=name,
               settings=config.settings, registry=registry, limit=config.limit, quiet=config.quiet,
               out_dir=config.out_dir, signature=signature)


def run_evaluation(config: EvalConfig, registry: Registry | None = None) -> dict[str, Any]:
    """Evaluate and write results.json, predictions.jsonl and report.md into ``out_dir``."""
    started = time.perf_counter()
    registry = registry or get_registry()
    require_dir(config.data_dir, "data directory")
    task = load_task(config.task, registry, config.settings)
    seed_everything(config.seed)
    loaded = load_model(config.model, config.settings, registry)
    split = config.split or task.default_split
    if config.out_dir.exists() and not config.out_dir.is_dir():
        raise AbductError(f"--out is not a directory: {config.out_dir}")
    run = build_run(config, task, loaded, registry, split)
    assert run.signature is not None
    resumed = _check_resume(config.out_dir, run.signature)

    evaluation = task.evaluate(run)
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
    out_dir = config.out_dir
    atomic_write_jsonl(out_dir / "predictions.jsonl", evaluation.predictions)
    atomic_write_text(out_dir / "report.md", markdown_report(results))
    atomic_write_json(out_dir / "results.json", results)
    run.discard_partial()
    return results
