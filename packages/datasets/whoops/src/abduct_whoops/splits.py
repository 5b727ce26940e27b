"""The supervised protocol's 5-fold cross-validation, 60/20/20 per fold, and the run's split.

**Folds.** Image ids are ordered by the SHA-256 of ``"whoops-folds:<seed>:<image_id>"`` (hex,
ascending; the seed is ``FOLD_SEED`` = 2023 unless told otherwise) and cut into five
contiguous parts ``P0..P4`` whose sizes differ by at most one (the first ``n mod 5`` parts
get the extra id). Fold ``k`` tests on ``P[k]``, validates on ``P[(k+1) mod 5]`` and trains
on the other three: every image is tested exactly once. Hashing instead of a random
generator makes the folds the same on every run, machine and library version; they depend
only on the ids and the seed. ``abduct whoops folds`` writes them to a JSON file that others
can reuse (the tasks read such a file with ``--dataset whoops,folds=FILE``).

**Splits** (``--split``): ``all`` (the zero-shot protocol, every image; the default) or
``fold<k>-<part>`` (``fold0-test`` ... ``fold4-train``) for a model trained on a fold.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.kit import atomic_write_json, read_json

FOLD_SEED = 2023
N_FOLDS = 5
PARTS = ("train", "val", "test")
_SPLIT = re.compile(r"^fold([0-4])-(train|val|test)$")


@dataclass(frozen=True)
class Folds:
    seed: int
    folds: tuple[dict[str, tuple[str, ...]], ...]

    def part(self, fold: int, name: str) -> tuple[str, ...]:
        return self.folds[fold][name]

    def as_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed, "n_folds": N_FOLDS,
            "method": "ids ordered by sha256('whoops-folds:<seed>:<image_id>'), cut into 5 contiguous parts; "
                      "fold k: test part k, val part (k+1) mod 5, train the other three",
            "folds": [{name: list(fold[name]) for name in PARTS} for fold in self.folds],
        }


def _order_key(seed: int, image_id: str) -> str:
    return hashlib.sha256(f"whoops-folds:{seed}:{image_id}".encode()).hexdigest()


def make_folds(image_ids: Sequence[str], seed: int = FOLD_SEED) -> Folds:
    """The five folds of ``image_ids`` (see the module docstring); ids keep no file order."""
    ordered = sorted(set(image_ids), key=lambda i: (_order_key(seed, i), i))
    size, extra = divmod(len(ordered), N_FOLDS)
    parts, start = [], 0
    for k in range(N_FOLDS):
        end = start + size + (1 if k < extra else 0)
        parts.append(tuple(ordered[start:end]))
        start = end
    folds = []
    for k in range(N_FOLDS):
        val = (k + 1) % N_FOLDS
        train = tuple(i for j in range(N_FOLDS) if j not in (k, val) for i in parts[j])
        folds.append({"train": train, "val": parts[val], "test": parts[k]})
    return Folds(seed, tuple(folds))


def write_folds(path: Path, folds: Folds) -> Path:
    atomic_write_json(Path(path), folds.as_json())
    return Path(path)


def read_folds(path: Path, image_ids: Sequence[str]) -> Folds:
    """A written folds file, checked against the data: five folds whose test parts cover
    every image exactly once, and whose parts of one fold do not overlap."""
    data = read_json(Path(path), "folds file")
    if not isinstance(data, dict) or not isinstance(data.get("folds"), list) or len(data["folds"]) != N_FOLDS:
        raise DataError(f"expected {{\"folds\": [{N_FOLDS} folds of train/val/test id lists]}}", file=path)
    folds = []
    for k, fold in enumerate(data["folds"]):
        parts: dict[str, tuple[str, ...]] = {}
        for name in PARTS:
            ids = fold.get(name) if isinstance(fold, dict) else None
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise DataError("expected a list of image ids", file=path, record=f"fold {k}", field=name)
            parts[name] = tuple(ids)
        every = [i for name in PARTS for i in parts[name]]
        if len(set(every)) != len(every):
            raise DataError("an image id is in two parts of this fold", file=path, record=f"fold {k}")
        folds.append(parts)
    known = set(image_ids)
    tested = [i for fold in folds for i in fold["test"]]
    unknown = sorted(set(tested) - known)
    if unknown:
        raise DataError(f"image id {unknown[0]!r} is not in the data", file=path, record="folds", field="test")
    if sorted(tested) != sorted(known):
        missing = sorted(known - set(tested))
        raise DataError(f"the test parts must cover every image once ({len(missing)} missing, e.g. "
                        f"{missing[0] if missing else 'none'!r})", file=path, record="folds", field="test")
    return Folds(int(data.get("seed", -1)), tuple(folds))


def parse_split(split: str) -> tuple[int, str] | None:
    """None for ``all``; ``(fold, part)`` for ``fold<k>-<part>``; AbductError otherwise."""
    if split == "all":
        return None
    match = _SPLIT.match(split)
    if match is None:
        raise AbductError(f"unknown WHOOPS! split '{split}' (expected all or fold<0-4>-<train|val|test>, "
                          "e.g. fold2-test)")
    return int(match.group(1)), match.group(2)
