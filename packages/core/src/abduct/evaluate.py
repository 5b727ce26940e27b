"""``abduct eval``: resolve a task and a model, run through the runner, write the outputs."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from abduct.cache import EmbeddingCache, default_cache_dir
from abduct.engine import ScoringEngine
from abduct.errors import AbductError, UnknownNameError
from abduct.io import atomic_write_json, atomic_write_jsonl, atomic_write_text, require_dir
from abduct.plugins import Registry, get_registry
from abduct.protocols import DualEncoder, MatrixScorer, Scorer, Task
from abduct.provenance import file_hashes, git_revision, package_versions
from abduct.report import markdown_report
from abduct.runner import PARTIAL_DIR, Run, seed_everything
from abduct.spec import ModelOptions, ModelSpec


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


def load_task(name: str, registry: Registry | None = None) -> Task:
    task = (registry or get_registry()).create("task", name)
    if not isinstance(task, Task):
        raise AbductError(f"task '{name}' does not implement the Task protocol")
    return task


def load_model(spec_text: str, options: ModelOptions, registry: Registry | None = None) -> tuple[ModelSpec, Any]:
    """Build a scorer or generator from a ``name[:argument][@tag]`` spec."""
    registry = registry or get_registry()
    spec = ModelSpec.parse(spec_text)
    known = {c.name: c.kind for kind in ("scorer", "generator") for c in registry.components(kind)}
    if spec.name not in known:
        raise UnknownNameError("model", spec.name, known)
    return spec, registry.create(known[spec.name], spec.name, spec, options)


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


def run_evaluation(config: EvalConfig, registry: Registry | None = None) -> dict[str, Any]:
    """Evaluate and write results.json, predictions.jsonl and report.md into ``out_dir``."""
    started = time.perf_counter()
    registry = registry or get_registry()
    require_dir(config.data_dir, "data directory")
    task = load_task(config.task, registry)
    seed_everything(config.seed)
    options = ModelOptions(device=config.device, batch_size=config.batch_size, seed=config.seed)
    spec, model = load_model(config.model, options, registry)
    fingerprint = str(getattr(model, "fingerprint", spec))
    split = config.split or task.default_split

    out_dir = config.out_dir
    if out_dir.exists() and not out_dir.is_dir():
        raise AbductError(f"--out is not a directory: {out_dir}")
    signature = _signature(config, split, fingerprint)
    resumed = _check_resume(out_dir, signature)

    engine = None
    if isinstance(model, (Scorer, MatrixScorer, DualEncoder)):
        cache = None
        if config.use_cache and isinstance(model, DualEncoder) and hasattr(model, "fingerprint"):
            cache = EmbeddingCache(config.cache_dir or default_cache_dir(), fingerprint)
        engine = ScoringEngine(model, batch_size=config.batch_size, cache=cache, quiet=config.quiet)
    run = Run(
        data_dir=config.data_dir,
        split=split,
        engine=engine,
        model=model,
        seed=config.seed,
        limit=config.limit,
        batch_size=config.batch_size,
        device=config.device,
        quiet=config.quiet,
        out_dir=out_dir,
        signature=signature,
    )
    evaluation = task.evaluate(model, run)
    total = time.perf_counter() - started
    results: dict[str, Any] = {
        "task": config.task,
        "model": {"spec": str(spec), "fingerprint": fingerprint},
        "data": {
            "dir": str(config.data_dir),
            "files": file_hashes(evaluation.data_files, config.data_dir),
        },
        "split": split,
        "seed": config.seed,
        "limit": config.limit,
        "metrics": evaluation.metrics,
        "details": evaluation.details,
        "versions": package_versions(),
        "git_revision": git_revision(),
        "resumed": resumed,
        "timings": {
            "total_seconds": total,
            "model_seconds": engine.model_seconds if engine is not None else 0.0,
            "stages": run.timings,
        },
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    atomic_write_jsonl(out_dir / "predictions.jsonl", evaluation.predictions)
    atomic_write_text(out_dir / "report.md", markdown_report(results))
    atomic_write_json(out_dir / "results.json", results)
    run.discard_partial()
    return results
