"""Independent shards of one evaluation, for clusters: ``abduct eval ... --shard I/N``.

A shard keeps, in every stage of the task's plan, the items (``Choose``, ``Compare``,
``Generate``, ``Judge``: by item id) or units (``Custom``: by unit id) whose stable hash
(sha256 of the id, not Python's salted ``hash``) is ``I`` modulo ``N``, before they are
batched; a stage with ``after=`` builds its request from the shard's own earlier records
(a judged item carries its generation's id, so it lands in the same shard). The shards
need no communication: a Slurm array, a Kubernetes indexed job or a loop over machines
runs them, each into its own ``--out``.

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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (``0 <= index < count``)."""

    index: int
    count: int

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
