"""What sharded evaluation under ``torchrun`` needs, and trainers share with it: this process's
rank, joining the process group, gathering results from every rank, and seeding everything.
What only trainers and models use (averaging gradients, permutation streams, per-request
seeds, one thread for tiny networks) is ``abduct_modelkit.training``'s.

The core does not depend on torch: torch is imported by name when these are called (by the
runner only under torchrun).
"""

from __future__ import annotations

import contextlib
import datetime
import importlib
import os
import random
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from abduct.contract.errors import AbductError

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Ranks:
    rank: int = 0
    world: int = 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def _dist() -> Any:
    return importlib.import_module("torch.distributed")


def current_ranks() -> Ranks:
    """This process's rank and the world size (0 of 1 outside a process group)."""
    dist = _dist()
    if dist.is_available() and dist.is_initialized():
        return Ranks(dist.get_rank(), dist.get_world_size())
    return Ranks()


@contextlib.contextmanager
def process_group(timeout_seconds: float | None = None) -> Iterator[Ranks]:
    """Inside: this process's ranks, in the torchrun group when there is one. Started by torchrun
    (WORLD_SIZE > 1) outside a group, it joins one (NCCL on GPUs, gloo on CPUs) and leaves it
    again on the way out, also on errors. ``timeout_seconds`` bounds every collective, so a
    rank that stops answering fails the others instead of hanging them (torch's default otherwise)."""
    if launched_world() <= 1:
        yield Ranks()
        return
    started = not _dist().is_initialized()
    if started:
        cuda = importlib.import_module("torch").cuda.is_available()
        extra = {} if timeout_seconds is None else {"timeout": datetime.timedelta(seconds=timeout_seconds)}
        _dist().init_process_group("nccl" if cuda else "gloo", **extra)
    try:
        yield current_ranks()
    finally:
        if started:
            _dist().destroy_process_group()


def launched_world() -> int:
    """The world size torchrun announced (1 outside torchrun); reads no torch, so the core
    runs single-process without torch installed."""
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1")))
    except ValueError:
        return 1


def eval_timeout_seconds() -> float:
    """How long a rank waits for the others at a gather (``ABDUCT_DIST_TIMEOUT``, default 30 min):
    longer than any one unit's work should take, short enough that a stuck rank is noticed."""
    try:
        return float(os.environ.get("ABDUCT_DIST_TIMEOUT", "1800"))
    except ValueError:
        return 1800.0


class RankLost(AbductError):
    """Another rank died or stopped answering during a gather."""


def gather_objects(obj: Any, ranks: Ranks) -> list[Any]:
    """``obj`` of every rank, in rank order (``[obj]`` in one process)."""
    if ranks.world == 1:
        return [obj]
    out: list[Any] = [None] * ranks.world
    try:
        _dist().all_gather_object(out, obj)
    except RuntimeError as exc:  # gloo/NCCL: a peer closed its connection or the timeout passed
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise RankLost(f"rank {ranks.rank} of {ranks.world}: another rank died or stopped answering ({first})") from None
    return out


def agree(error: str | None, ranks: Ranks) -> None:
    """Raise the first rank's error on every rank when any rank has one, so that a problem
    one rank found (bad input in its share, a refused --out) stops all of them alike."""
    errors = [e for e in gather_objects(error, ranks) if e is not None]
    if errors:
        raise AbductError(errors[0])


def shard_map(items: Sequence[T], compute: Callable[[T], R], ranks: Ranks,
              wrap: Callable[[Sequence[T]], Iterable[T]] | None = None) -> list[R]:
    """``[compute(item) for item in items]``, where under torchrun rank r computes items
    r, r + world, ... and every rank receives all the results. The items (batches) are the same
    as in one process, so each result is the same number for number. An error on one rank is
    raised on every rank after the gather (nobody waits for a rank that gave up)."""
    mine = items[ranks.rank :: ranks.world]
    shown = wrap(mine) if wrap is not None else mine
    if ranks.world == 1:
        return [compute(item) for item in shown]
    local: list[R] = []
    failure: BaseException | None = None
    message: str | None = None
    try:
        local = [compute(item) for item in shown]
    except Exception as exc:  # handed to every rank below, re-raised here as it was
        failure = exc
        message = str(exc) if isinstance(exc, AbductError) else f"rank {ranks.rank}: {type(exc).__name__}: {exc}"
    parts = gather_objects((local, message), ranks)
    if failure is not None:
        raise failure
    first_error = next((m for _, m in parts if m is not None), None)
    if first_error is not None:
        raise AbductError(first_error)
    out: list[R] = [None] * len(items)  # type: ignore[list-item]
    for rank, (values, _) in enumerate(parts):
        out[rank :: ranks.world] = values
    return out


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and (when already imported) torch."""
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
