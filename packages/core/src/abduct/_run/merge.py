"""``abduct merge OUT SHARD_DIR...``: the shards of one run (``abduct eval ... --shard I/N``)
made into that run's outputs, equal to one process's run.

First every check, before anything is written: each folder is a finished shard, all belong to
one run (task spec, model fingerprint and decoding, judge, data file hashes, dataset options,
split, limit, seed, ``--ci-resamples``, the number of shards N), and together they are shards
0..N-1, each once. Then the task's plan is rebuilt from the dataset (``plan`` is pure; no
model is loaded and no GPU is needed: what the model was comes from the manifests), each
stage's records are taken from the shards in the full plan's order (an ``after=`` stage's
request built from the merged records, as in one process), the task's ``finish`` runs on them,
and the outputs are written through the same writer as a whole run's.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from abduct._declare.traits import task_traits
from abduct._engine.tokens import added_blocks
from abduct._registry.registry import Registry, get_registry
from abduct._run.collect import build_dataset, collect_examples, load_task
from abduct._run.outdir import (
    check_finished,
    check_not_a_shard,
    keeping_finished,
    locked,
    removed_if_left_empty,
    restore_interrupted_swap,
)
from abduct._run.provenance import file_hashes
from abduct._run.requests import typed
from abduct._run.runner import Run
from abduct._run.shards import (
    RECORDS_FILE,
    SHARD_FILE,
    Parts,
    owner,
    read_manifest,
    read_records,
)
from abduct._run.staged import element_keys, finish_task, planned_stages, stage_request, task_who
from abduct._run.write import add_tail, check_outcome, results_of, write_outputs
from abduct.contract.errors import AbductError
from abduct.contract.spec import Settings, Spec
from abduct.contract.stages import Records, RunInfo
from abduct.kit.cache import default_cache_dir
from abduct.kit.io import ensure_writable_dir, require_dir


@dataclass(frozen=True)
class ShardDir:
    directory: Path
    manifest: dict[str, Any]

    @property
    def index(self) -> int:
        return int(self.manifest["shard"]["index"])

    @property
    def count(self) -> int:
        return int(self.manifest["shard"]["count"])

    @property
    def name(self) -> str:
        return f"{self.index}/{self.count}"


def identity(manifest: dict[str, Any]) -> dict[str, Any]:
    """What every shard of one run shares, by the name an error gives it."""
    judge = manifest.get("judge")
    return {
        "task": manifest["task"],
        "model fingerprint": manifest["model"]["fingerprint"],
        "decoding": manifest["model"].get("decoding"),
        "judge": None if judge is None else {"fingerprint": judge["fingerprint"], "prompts": judge["prompts"],
                                             "others": [o["fingerprint"] for o in judge.get("others", [])]},
        "data files": manifest["data"]["files"],
        "dataset options": manifest["datasets"],
        "split": manifest["split"],
        "limit": manifest["limit"],
        "seed": manifest["seed"],
        "--ci-resamples": manifest["ci_resamples"],
        "number of shards": manifest["shard"]["count"],
    }


def _open(directory: Path) -> ShardDir:
    """A finished shard's folder; one line naming what it is otherwise."""
    require_dir(directory, "shard folder")
    manifest = read_manifest(directory)
    if manifest is not None:
        if not (directory / RECORDS_FILE).is_file():
            raise AbductError(f"{directory}: {RECORDS_FILE} is missing; run that shard again")
        return ShardDir(directory, manifest)
    if (directory / ".partial").is_dir():
        raise AbductError(f"{directory} holds an unfinished shard (no {SHARD_FILE}): run the same abduct eval "
                          "--shard into it again to finish it")
    if (directory / "results.json").is_file():
        raise AbductError(f"{directory} is a finished run, not a shard (abduct eval ... --shard I/N makes shards)")
    raise AbductError(f"{directory} is not a shard folder (no {SHARD_FILE})")


def _shown(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_one_run(shards: Sequence[ShardDir]) -> None:
    """The shards of one run, 0..N-1 each once; one line for a foreign, duplicated or missing shard."""
    first = shards[0]
    mine = identity(first.manifest)
    for other in shards[1:]:
        theirs = identity(other.manifest)
        differs = [key for key in mine if mine[key] != theirs[key]]
        if differs:
            key = differs[0]
            if key == "data files":
                names = sorted(k for k in {*mine[key], *theirs[key]} if mine[key].get(k) != theirs[key].get(k))
                detail = f"data files ({', '.join(names)} differ)"
            elif isinstance(mine[key], dict | list) or isinstance(theirs[key], dict | list):
                detail = key
            else:
                detail = f"{key} ({_shown(theirs[key])}, not {_shown(mine[key])})"
            raise AbductError(f"{other.directory} is a shard of another run than {first.directory}: different "
                              f"{detail}")
    by_index: dict[int, ShardDir] = {}
    for shard in shards:
        if shard.index in by_index:
            raise AbductError(f"shard {shard.name} is given twice: {by_index[shard.index].directory} and "
                              f"{shard.directory}")
        by_index[shard.index] = shard
    missing = [f"{i}/{first.count}" for i in range(first.count) if i not in by_index]
    if missing:
        word = "shard" if len(missing) == 1 else "shards"
        raise AbductError(f"{word} {', '.join(missing)} of {first.count} {'is' if len(missing) == 1 else 'are'} "
                          f"missing (given: {', '.join(s.name for s in sorted(shards, key=lambda s: s.index))})")


def _stored(shard: ShardDir) -> dict[str, Parts]:
    """A shard's records, each stage's by element, checked against its manifest."""
    parts = read_records(shard.directory)
    expected = {stage: int(entry["elements"]) for stage, entry in shard.manifest["stages"].items()}
    if {stage: len(elements) for stage, elements in parts.items()} != expected:
        raise AbductError(f"{shard.directory}: {RECORDS_FILE} does not hold what {SHARD_FILE} lists; "
                          "run that shard again")
    return parts


def merged_stage(stage: str, keys: Sequence[str], shards: Sequence[ShardDir], stored: Sequence[dict[str, Parts]]
                 ) -> Records:
    """The stage's records in the whole plan's order: each element's from the shard its key
    names, whose elements of that stage come in the same order (a shard keeps the plan's order)."""
    count = len(shards)
    held = [parts.get(stage, []) for parts in stored]
    at = [0] * count
    merged: Records = []
    for key in keys:
        i = owner(key, count)
        elements, k = held[i], at[i]
        if k >= len(elements) or elements[k][0] != key:
            raise AbductError(f"shard {shards[i].name} ({shards[i].directory}) holds no records of stage '{stage}' "
                              f"element '{key}' where the run's plan has it: a stage built from records of other "
                              "shards' items cannot be split (run that task whole), or the shard read other data")
        merged.extend(elements[k][1])
        at[i] = k + 1
    for i, elements in enumerate(held):
        if at[i] < len(elements):
            raise AbductError(f"shard {shards[i].name} ({shards[i].directory}) holds stage '{stage}' element "
                              f"'{elements[at[i]][0]}', which this run's plan does not have: the shards were made "
                              "from other data or options")
    return merged


def _inputs_block(shards: Sequence[ShardDir]) -> dict[str, Any]:
    """``{"inputs": ...}`` over the shards' model blocks: each fact as the shards say it, the
    distinct values as a list where they differ (shards served by replicas reporting other
    fingerprints); nothing where no shard says anything."""
    said = [s.manifest["model"].get("inputs") for s in shards]
    if not any(said):
        return {}
    return {"inputs": combined([d for d in said if isinstance(d, dict)])}


def combined(facts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The mappings ``facts`` joined: nested mappings joined key by key, a value all give alike
    kept, differing values listed (each once, in order: a list given is a list of values)."""
    out: dict[str, Any] = {}
    for key in dict.fromkeys(k for f in facts for k in f):
        values = [f[key] for f in facts if key in f]
        if all(isinstance(v, dict) for v in values):
            out[key] = combined(values)
            continue
        distinct: list[Any] = []
        for value in values:
            for one in value if isinstance(value, list) else [value]:
                if one not in distinct:
                    distinct.append(one)
        out[key] = values[0] if all(v == values[0] for v in values) else distinct
    return out


def _judge_block(shards: Sequence[ShardDir]) -> dict[str, Any] | None:
    """results.json's judge block over the shards: their counts and times added up."""
    blocks = [s.manifest["judge"] for s in shards]
    if blocks[0] is None:
        return None
    prompts: dict[str, str] = {}
    for block in blocks:
        prompts.update(block["prompts"])
    hashes = sorted(set(prompts.values()))
    prompt = hashes[0] if len(hashes) == 1 else (
        hashlib.sha256("\n".join(hashes).encode()).hexdigest() if hashes else None)
    block = {"spec": blocks[0]["spec"], "fingerprint": blocks[0]["fingerprint"], "prompt_sha256": prompt,
             "prompts": dict(sorted(prompts.items())), "judged": sum(int(b["judged"]) for b in blocks),
             "parse_failures": sum(int(b["parse_failures"]) for b in blocks),
             "read_by_task": sum(int(b["read_by_task"]) for b in blocks),
             "model_seconds": sum(float(b["model_seconds"]) for b in blocks)}
    if blocks[0].get("others"):  # further --judge specs: each one's counts added up the same way
        block["others"] = [{**other, **{key: sum(b["others"][k][key] for b in blocks) for key in
                                        ("judged", "parse_failures", "read_by_task", "model_seconds",
                                         "same_verdicts", "both_read")}}
                           for k, other in enumerate(blocks[0]["others"])]
    return block


def _resumed_units(shards: Sequence[ShardDir]) -> dict[str, Any]:
    """``resumed_units`` over the shards (their kept and total units added up); nothing when a
    shard's manifest has none (an older abduct's)."""
    counts: list[dict[str, Any]] = []
    for shard in shards:
        count = shard.manifest.get("resumed_units")
        if not (isinstance(count, dict) and all(isinstance(count.get(k), int) for k in ("kept", "of"))):
            return {}
        counts.append(count)
    return {"resumed_units": {key: sum(c[key] for c in counts) for key in ("kept", "of")}}


def _added(shards: Sequence[ShardDir], key: str) -> float:
    return sum(float(s.manifest["timings"].get(key, 0.0)) for s in shards)


def merge_shards(out_dir: Path, shard_dirs: Sequence[Path], *, data_dir: Path | None = None, device: str = "cpu",
                 overwrite: bool = False, quiet: bool = False, use_cache: bool = True,
                 registry: Registry | None = None) -> dict[str, Any]:
    """Check that ``shard_dirs`` are the shards of one run and write that run's outputs into
    ``out_dir``; its results.json is returned. ``data_dir`` is where this machine reads the
    data (default: where the first shard read it); its files must hash as the shards' did."""
    started = time.perf_counter()
    if not shard_dirs:
        raise AbductError("give the shards' folders to merge")
    shards = sorted((_open(Path(d)) for d in shard_dirs), key=lambda s: s.index)
    check_one_run(shards)
    first = shards[0].manifest
    target = out_dir.resolve()  # once, not once per shard
    for shard in shards:
        if target == shard.directory.resolve():
            raise AbductError(f"{out_dir} is shard {shard.name}'s folder; merge into another folder")
    if out_dir.exists() and not out_dir.is_dir():
        raise AbductError(f"--out {out_dir} is a file, not a directory")
    if not overwrite:
        check_not_a_shard(out_dir, overwrite=False)

    registry = registry or get_registry()
    settings = Settings(device=device, batch_size=int(first["batch_size"]), seed=int(first["seed"]))
    task = load_task(first["task_text"], registry, settings)
    name = Spec.parse(first["task_text"]).name
    data = Path(data_dir) if data_dir is not None else Path(first["data"]["resolved"])
    data_label = str(data_dir) if data_dir is not None else str(first["data"]["dir"])
    if data_dir is None and not data.is_dir():
        raise AbductError(f"the shards read their data in {data}, which this machine does not have: pass --data DIR")
    require_dir(data, "data directory")
    model = {**first["model"], **_inputs_block(shards)}
    run_identity = {"task": first["task_text"], "model": str(Spec.parse(model["spec"])), "split": first["split"],
                    "data_dir": data_label, "limit": first["limit"], "seed": first["seed"]}
    if not overwrite:
        check_finished(out_dir, run_identity, overwrite=False)

    run = Run(data_dir=data, split=first["split"], model_name=first["model_name"], settings=settings,
              registry=registry, limit=first["limit"], quiet=quiet)
    traits = task_traits(task, first["task_text"])
    dataset = build_dataset(task, first["datasets"].get(task.dataset), registry, settings)
    collected = collect_examples(task, dataset, data, first["split"], first["limit"], traits)
    run.limit_unit, run.data_files = collected.limit_unit, collected.files
    examples, corpus = collected.examples, collected.corpus
    read = file_hashes(run.data_files, data)
    if read != first["data"]["files"]:
        names = sorted(k for k in {*read, *first["data"]["files"]} if read.get(k) != first["data"]["files"].get(k))
        raise AbductError(f"the data in {data} is not what the shards read ({', '.join(names) or 'its files'} "
                          "differ); pass --data with the shards' data")
    abilities = set(model["abilities"])
    known = RunInfo(split=first["split"], model_name=first["model_name"], scores="score" in abilities,
                    generates="generate" in abilities, judged=first["judge"] is not None, metric=run.metric,
                    settings=settings, corpus=corpus)

    stored = [_stored(shard) for shard in shards]  # shard i at position i: checked above
    records: dict[str, Records] = {}
    for stage in planned_stages(task, run, examples, known, name):
        request = stage_request(stage, records, name, task_who(run, name))
        records[stage.name] = typed(request, merged_stage(stage.name, element_keys(request), shards, stored))
    extra = next(((shard, stage) for shard, parts in zip(shards, stored) for stage in parts if stage not in records),
                 None)
    if extra is not None:
        raise AbductError(f"shard {extra[0].name} ({extra[0].directory}) holds a stage '{extra[1]}' that this run's "
                          "plan does not have: the shards were made from other data or options")

    outcome = finish_task(task, run, traits, name, examples, records, known)
    evaluation = outcome.evaluation
    check_outcome(first["task_text"], data, first["split"], evaluation)
    ignored = sorted({i for s in shards for i in s.manifest["inputs"]["ignored"]})
    about = {"task": first["task_text"], "model": model, "split": first["split"], "seed": first["seed"],
             "limit": first["limit"], "limit_unit": run.limit_unit, "ignored": ignored}
    results, units, interval_seconds = results_of(traits, evaluation, about, data, int(first["ci_resamples"]),
                                                  data_label)
    stages: dict[str, float] = {}
    for shard in shards:
        for stage_name, seconds in shard.manifest["timings"].get("stages", {}).items():
            stages[stage_name] = stages.get(stage_name, 0.0) + float(seconds)
    merge_seconds = time.perf_counter() - started
    results.update({
        "resumed": any(bool(s.manifest["resumed"]) for s in shards),
        **_resumed_units(shards),
        "processes": sum(int(s.manifest["processes"]) for s in shards),
        "tokens": added_blocks(s.manifest.get("tokens") for s in shards),  # an older manifest's: none, counted 0
        "shards": len(shards),
        # where each shard came from (--shard, or the variables --shard auto read); an older manifest's was --shard
        "shard_sources": [str(s.manifest["shard"].get("source", "--shard")) for s in shards],
        "timings": {
            "total_seconds": _added(shards, "total_seconds") + merge_seconds,  # the work of every shard, and the merge
            "model_seconds": _added(shards, "model_seconds"),
            "interval_seconds": interval_seconds,
            "stages": stages,
            "merge_seconds": merge_seconds,
            "shard_seconds": [float(s.manifest["timings"]["total_seconds"]) for s in shards],
        },
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    })
    add_tail(results, _judge_block(shards))

    created = not out_dir.exists()
    ensure_writable_dir(out_dir)
    with removed_if_left_empty(out_dir, created), locked(out_dir):
        restore_interrupted_swap(out_dir)
        check_finished(out_dir, run_identity, overwrite)
        check_not_a_shard(out_dir, overwrite)
        thumbnails = default_cache_dir() / "thumbnails" if use_cache else None
        with keeping_finished(out_dir):
            write_outputs(out_dir, results, evaluation.predictions, run.artifacts, units,
                          outcome.view, thumbnails, registry)
    return results
