"""``abduct eval``: a run in order, each part once: ``collect`` (the task, its dataset and
examples, then the model and the ``Run``), the out folder claimed (``outdir``), the task's stages
and ``finish`` (``staged``), the outputs (``write``)."""

from __future__ import annotations

import time
from typing import Any

from abduct._engine.models import load_model
from abduct._registry.registry import Registry, get_registry
from abduct._run.collect import EvalConfig, Prepared, build_run, identity, prepare, shard_identity
from abduct._run.outdir import claimed, resumes
from abduct._run.shards import finished_here
from abduct._run.staged import evaluate_shard, evaluate_task
from abduct._run.write import finished_run, finished_shard
from abduct.contract.errors import AbductError
from abduct.kit.cache import run_caches
from abduct.kit.distributed import Ranks, eval_timeout_seconds, launched_world, process_group, seed_everything
from abduct.kit.io import ensure_writable_dir, require_dir

__all__ = ["EvalConfig", "run_evaluation"]


def run_evaluation(config: EvalConfig, registry: Registry | None = None) -> dict[str, Any]:
    """Evaluate and write results.json, predictions.jsonl, report.md and report.html into
    ``out_dir``. Under torchrun every rank calls this: the engines split the model's work,
    and rank 0 alone writes the outputs (the other ranks return the same results). With
    ``config.shard``, ``out_dir`` receives that shard's records and manifest for ``abduct merge``
    (one process per shard: refused under torchrun; a shard that RANK/WORLD_SIZE named under
    ``--shard auto`` is this process alone, which joins no process group)."""
    if config.shard is not None and launched_world() > 1 and not config.shard.from_ranks:
        raise AbductError(f"--shard {config.shard} splits a run across machines and torchrun across the "
                          f"{launched_world()} processes of one: use one of them (one process per shard, more shards "
                          "for more GPUs)")
    with run_caches(config.cache_dir, config.use_cache):  # the caches plugins keep follow these too
        if config.shard is not None and config.shard.from_ranks:
            return _evaluate(config, registry or get_registry(), Ranks())
        with process_group(eval_timeout_seconds()) as ranks:
            return _evaluate(config, registry or get_registry(), ranks)


def _evaluate(config: EvalConfig, registry: Registry, ranks: Ranks) -> dict[str, Any]:
    started = time.perf_counter()
    if (config.budget_tokens is not None or config.budget_cost is not None) and ranks.world > 1:  # each rank would stop at a unit of its own
        raise AbductError("--budget counts one process's tokens; under torchrun use --shard (a budget per shard) "
                          "or no budget")
    require_dir(config.data_dir, "data directory")
    if config.cache_dir is not None and config.use_cache:
        ensure_writable_dir(config.cache_dir, "--cache-dir")
    prepared: Prepared = prepare(config, registry)
    split, shard = prepared.split, config.shard
    run_identity = identity(config, split)
    own = shard_identity(config, split, shard) if shard is not None else None
    with claimed(config.out_dir, run_identity, config.overwrite, ranks, own):
        if own is not None and not config.overwrite and (done := finished_here(config.out_dir, own)) is not None:
            return done  # evaluated before: a rerun (a resubmitted job) loads no model and changes nothing
        seed_everything(config.seed)
        loaded = load_model(config.model, config.settings, registry)
        run, known, examples = build_run(config, prepared, loaded, registry, split, ranks)
        assert run.signature is not None
        resumed = resumes(config.out_dir, run.signature, config.overwrite, ranks)
        if shard is not None:
            assert own is not None
            parts = evaluate_shard(prepared, run, known, examples, shard)
            return finished_shard(config, prepared, shard, own, loaded, run, parts, resumed, started)
        outcome = evaluate_task(prepared, run, known, examples)
        about = {"task": config.task, "split": split, "seed": config.seed, "limit": config.limit,
                 "label": config.label}
        return finished_run(run, loaded, outcome.evaluation, prepared.traits, about, resumed, started,
                            config.ci_resamples, outcome.view, registry)
