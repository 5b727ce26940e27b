"""Independent shards of one evaluation, for clusters: ``abduct eval ... --shard I/N``.

A shard keeps, in every stage of the task's plan, the items (``Choose``, ``Compare``,
``Generate``, ``Judge``: by item id) or units (``Custom``: by unit id) whose stable hash
(sha256 of the id, not Python's salted ``hash``) is ``I`` modulo ``N``, before they are
batched; a stage with ``after=`` builds its request from the shard's own earlier records
(a judged item carries its generation's id, so it lands in the same shard). The shards
need no communication: a Slurm array, a Kubernetes indexed job or a loop over machines
runs them, each into its own ``--out``. ``--shard auto`` reads the shard from what that engine
sets (``from_environment``), and the manifest says where it came from.

A finished shard folder holds ``records.jsonl`` (one line per stage: ``{"stage", "keys",
"records"}``, each element's key and its records, in order) and, written last, ``shard.json`` (the manifest: which shard
of which run, what the model and the data were, the timings). It is not a finished run: it
has no ``results.json``. ``abduct merge`` (``abduct._run.merge``) checks that the shards make
one run and writes that run's outputs.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from abduct.contract.errors import AbductError
from abduct.contract.stages import Records
from abduct.kit.io import atomic_write_json, atomic_write_jsonl

SHARD_FILE = "shard.json"
RECORDS_FILE = "records.jsonl"
SHARD_FILES = (SHARD_FILE, RECORDS_FILE)
FORMAT = 1  # of shard.json and records.jsonl; a merge refuses another
MANIFEST_KEYS = frozenset({"shard", "run", "task", "task_text", "model", "model_name", "data", "datasets", "split",
                           "seed", "batch_size", "limit", "limit_unit", "ci_resamples", "inputs", "judge", "stages",
                           "resumed", "processes", "timings"})
Parts = list[tuple[str, Records]]  # a stage's elements (item or unit ids) with their records, in order


def owner(key: str, count: int) -> int:
    """The shard (of ``count``) that evaluates the element ``key``: the same on every machine
    and Python process."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % count


EXPLICIT = "--shard"  # the source of a shard given as --shard I/N
RANK = "RANK"


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (``0 <= index < count``); ``source`` says where it came from
    (``--shard`` or the environment variables that named it), recorded but no part of which
    shard it is: a shard started by an array task resumes under ``--shard I/N`` and merges with
    shards of any source."""

    index: int
    count: int
    source: str = field(default=EXPLICIT, compare=False)

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``I/N``; a ValueError saying what is wrong otherwise."""
        found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if found is None:
            raise ValueError(f"expected I/N (shard I of N, e.g. 0/4), got '{text}'")
        index, count = int(found.group(1)), int(found.group(2))
        if count < 1:
            raise ValueError(f"the number of shards must be at least 1, got '{text}'")
        if index >= count:
            raise ValueError(f"the shard index must be below the number of shards (0 to {count - 1}), got '{text}'")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, key: str) -> bool:
        return owner(key, self.count) == self.index

    @property
    def described(self) -> str:
        """``1/3``, or ``1/3 (from SLURM_ARRAY_TASK_ID)`` for a shard the environment named."""
        return str(self) if self.source == EXPLICIT else f"{self} (from {self.source})"

    @property
    def from_ranks(self) -> bool:
        """RANK/WORLD_SIZE named it: this process is the whole shard, and joins no torchrun group."""
        return RANK in self.source.split(" and ")


# --shard auto: the variables that name this process's shard (Slurm array, Kubernetes Indexed Job, launchers)
_INDEX_VARIABLES = ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", RANK)


def _number(environ: Mapping[str, str], name: str) -> int | None:
    """A variable's whole number (None when it is not set); a ValueError naming it otherwise."""
    text = environ.get(name)
    if text is None:
        return None
    if not re.fullmatch(r"\s*\d+\s*", text):
        raise ValueError(f"--shard auto: {name}='{text}' is not a whole number")
    return int(text)


def _slurm_count(environ: Mapping[str, str]) -> int | None:
    """The number of tasks of the Slurm array, which must be 0..N-1 with no gap. slurmctld sets
    SLURM_ARRAY_TASK_COUNT (indices set), _MIN and _MAX (the lowest and highest) and _STEP (the
    ``:S`` of ``--array``, else 1): ``--array=0-2`` gives 3, 0, 2, 1; ``--array=0-4:2`` 3, 0, 4, 2;
    ``--array=0,2,4`` 3, 0, 4, 1. A gap shows as a step above 1 or MAX + 1 above COUNT."""
    count, low, high, step = (_number(environ, f"SLURM_ARRAY_TASK_{k}") for k in ("COUNT", "MIN", "MAX", "STEP"))
    if low is not None and low != 0:
        raise ValueError(f"--shard auto: the Slurm array starts at {low} (SLURM_ARRAY_TASK_MIN), and shards are "
                         "numbered from 0: submit it with --array=0-(N-1)")
    if step is not None and step != 1:
        raise ValueError(f"--shard auto: the Slurm array has a step of {step} (SLURM_ARRAY_TASK_STEP), so some "
                         "shards would never run: submit it with --array=0-(N-1)")
    if count is not None and high is not None and count != high + 1:
        raise ValueError(f"--shard auto: the Slurm array has gaps ({count} tasks, SLURM_ARRAY_TASK_COUNT, up to "
                         f"index {high}, SLURM_ARRAY_TASK_MAX), so some shards would never run: submit it with "
                         "--array=0-(N-1)")
    return count if count is not None else None if high is None else high + 1


def from_environment(environ: Mapping[str, str], count: int | None = None) -> Shard:
    """``--shard auto``: the shard the job engine named, from a Slurm array (SLURM_ARRAY_TASK_ID,
    its count from SLURM_ARRAY_TASK_COUNT or _MIN/_MAX), a Kubernetes Indexed Job
    (JOB_COMPLETION_INDEX; Kubernetes gives no count: ``count``, from --shards) or RANK/WORLD_SIZE
    (one process per shard, so not torchrun's processes, which share one run and one --out).
    ``count`` (--shards) gives or confirms the number of shards. Every variable set must name the
    same shard: the same index, and the same count where it gives one. A ValueError, one line
    saying what is wrong, otherwise."""
    found: list[tuple[str, int, int | None]] = []  # (index variable, index, count or None)
    for name in _INDEX_VARIABLES:
        index = _number(environ, name)
        if index is None:
            continue
        if name == "SLURM_ARRAY_TASK_ID":
            found.append((name, index, _slurm_count(environ)))
        elif name == RANK:
            if "TORCHELASTIC_RUN_ID" in environ:
                raise ValueError("--shard auto: RANK was set by torchrun (TORCHELASTIC_RUN_ID is set), whose "
                                 "processes share one run and one --out: drop --shard to let them share the work, "
                                 "or start one abduct eval per shard")
            found.append((name, index, _number(environ, "WORLD_SIZE")))
        else:
            found.append((name, index, None))
    if not found:
        names = ", ".join(_INDEX_VARIABLES)
        raise ValueError(f"--shard auto: none of {names} is set, so the environment names no shard: "
                         "give --shard I/N, or run it as a task of a Slurm array, a Kubernetes Indexed Job or "
                         "under RANK/WORLD_SIZE")

    def said(name: str, index: int, total: int | None) -> str:
        return f"{name} says shard {index}" + ("" if total is None else f" of {total}")

    first = found[0]
    for other in found[1:]:
        if other[1] != first[1] or (None not in (other[2], first[2]) and other[2] != first[2]):
            raise ValueError(f"--shard auto: the environment names two shards ({said(*first)}, {said(*other)}): "
                             "unset one, or give --shard I/N")
    source = " and ".join(name for name, _, _ in found)
    counted = next((found_one for found_one in found if found_one[2] is not None), None)
    if counted is not None and count is not None and counted[2] != count:
        raise ValueError(f"--shards {count} disagrees with the environment: {said(*counted)}")
    total = counted[2] if counted is not None else count
    if total is None:
        raise ValueError(f"--shard auto: {source} names the shard but not how many there are: add --shards N")
    if total < 1:
        raise ValueError(f"--shard auto: WORLD_SIZE={total}; the number of shards must be at least 1")
    if first[1] >= total:
        raise ValueError(f"--shard auto: {said(source, first[1], None)}, outside shards 0 to {total - 1} of {total}")
    return Shard(first[1], total, source)


def write_shard(out_dir: Path, manifest: Mapping[str, Any], parts: Mapping[str, Parts]) -> None:
    """The shard's records (one line per stage: its element keys and each one's records, in
    order), then its manifest (its presence marks a finished shard)."""
    atomic_write_jsonl(out_dir / RECORDS_FILE, ({"stage": stage, "keys": [key for key, _ in elements],
                                                 "records": [records for _, records in elements]}
                                                for stage, elements in parts.items()))
    atomic_write_json(out_dir / SHARD_FILE, dict(manifest))


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """``directory``'s shard manifest; None when it has none."""
    path = directory / SHARD_FILE
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        raise AbductError(f"{directory}: {SHARD_FILE} cannot be read; run that shard again") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not MANIFEST_KEYS <= set(manifest):
        raise AbductError(f"{directory}: {SHARD_FILE} is not a shard manifest of this abduct (format {FORMAT}); "
                          "run that shard again")
    return manifest


def finished_here(directory: Path, run: Mapping[str, Any]) -> dict[str, Any] | None:
    """The manifest of ``directory``'s finished shard when it is this very shard of this run (a
    resubmitted array task, say: nothing to evaluate again), marked ``already_finished``; None
    otherwise, and when its files do not read (the run then evaluates it as usual)."""
    try:
        manifest = read_manifest(directory)
    except AbductError:
        return None
    if manifest is None or manifest.get("run") != dict(run) or not (directory / RECORDS_FILE).is_file():
        return None
    return {**manifest, "already_finished": True}


def read_records(directory: Path) -> dict[str, Parts]:
    """Each stage's elements, keyed, with their records, as a finished shard evaluated them."""
    path = directory / RECORDS_FILE
    parts: dict[str, Parts] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                entry = json.loads(line)
                stage, keys, records = entry["stage"], entry["keys"], entry["records"]
                if (len(keys) != len(records) or stage in parts or not all(isinstance(k, str) for k in keys)
                        or not all(isinstance(r, list) for r in records)):
                    raise ValueError
                parts[str(stage)] = list(zip(keys, records))
    except (ValueError, KeyError, TypeError, OSError):
        raise AbductError(f"{directory}: {RECORDS_FILE} is missing or damaged; run that shard again") from None
    return parts
