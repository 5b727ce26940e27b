"""What torch trainers (and, later, sharded evaluation) share under ``torchrun``: this
process's rank, joining the process group, averaging gradients, and seeds that depend only
on (seed, position) so a resumed or sharded run sees the same randomness.

The core does not depend on torch: torch is imported by name when these are called, which
only torch plugins do.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
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


def join_process_group(timeout_seconds: float | None = None) -> bool:
    """Join the process group when started by torchrun (WORLD_SIZE > 1): NCCL on GPUs, gloo on
    CPUs. True when this call made the group (the caller then destroys it). ``timeout_seconds``
    bounds every collective, so a rank that stops answering fails the others instead of
    hanging them (torch's default otherwise)."""
    if launched_world() <= 1 or _dist().is_initialized():
        return False
    cuda = importlib.import_module("torch").cuda.is_available()
    extra: dict[str, Any] = {}
    if timeout_seconds is not None:
        extra["timeout"] = datetime.timedelta(seconds=timeout_seconds)
    _dist().init_process_group("nccl" if cuda else "gloo", **extra)
    return True


@contextlib.contextmanager
def process_group(timeout_seconds: float | None = None) -> Iterator[Ranks]:
    """Inside: this process's ranks, in the torchrun group when there is one; a group this
    made is left again on the way out, also on errors."""
    started = join_process_group(timeout_seconds)
    try:
        yield current_ranks() if launched_world() > 1 else Ranks()
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
        for j, value in enumerate(values):
            out[rank + j * ranks.world] = value
    return out


def average_gradients(model: Any, ranks: Ranks | None = None) -> None:
    """Mean of ``model``'s parameter gradients over the ranks (one flat all-reduce)."""
    ranks = ranks or current_ranks()
    if ranks.world == 1:
        return
    torch = importlib.import_module("torch")
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    _dist().all_reduce(flat)
    flat /= ranks.world
    offset = 0
    for g in grads:
        g.copy_(flat[offset : offset + g.numel()].view_as(g))
        offset += g.numel()


def seed_for(*parts: int) -> int:
    """A 63-bit seed from integers (e.g. the run's seed and an epoch or a stream position)."""
    digest = hashlib.blake2b(",".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


def require_divisible_batch(batch_size: int, ranks: Ranks) -> None:
    """Each rank takes an equal slice of the global batch, so the update matches one process."""
    if batch_size % ranks.world:
        raise AbductError(f"--batch-size {batch_size} must be divisible by the {ranks.world} processes")


class PermutationStream:
    """Position ``p`` of an endless stream of per-epoch permutations of ``range(count)``,
    each seeded by (seed, epoch): a trainer's batches depend only on (seed, step), so a
    resumed run sees the batches an uninterrupted one would have."""

    def __init__(self, count: int, seed: int) -> None:
        self.count, self.seed = count, seed
        self._epoch: tuple[int, list[int]] = (-1, [])

    def index(self, position: int) -> int:
        epoch, offset = divmod(position, self.count)
        if self._epoch[0] != epoch:  # one permutation is kept: positions are read in order
            torch = importlib.import_module("torch")
            generator = torch.Generator().manual_seed(seed_for(self.seed, epoch))
            self._epoch = (epoch, torch.randperm(self.count, generator=generator).tolist())
        return self._epoch[1][offset]


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and (when already imported) torch."""
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


@contextlib.contextmanager
def torch_seeded(seed: int) -> Iterator[None]:
    """Torch's CPU (and current CUDA device's) generators seeded with ``seed`` inside, restored
    after: sampling per request from its own seed makes texts independent of batching."""
    torch = importlib.import_module("torch")  # by name: the core does not depend on torch
    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


SMALL_NETWORK = 5_000_000  # parameters: the tiny test and demo models have well under 1 M


def is_small_on_cpu(net: Any, device: Any) -> bool:
    """A network under ``SMALL_NETWORK`` parameters on the CPU (``t5:tiny``, ``lxmert:tiny``,
    ``vlm:tiny``), for which ``one_thread_if`` pays."""
    return getattr(device, "type", str(device)) == "cpu" and sum(p.numel() for p in net.parameters()) < SMALL_NETWORK


@contextlib.contextmanager
def one_thread_if(small: bool) -> Iterator[None]:
    """One torch CPU thread inside when ``small``: a small network's matrices are too small for
    intra-op threads to pay, and on a busy machine the threads cost many times the work
    (measured on 2 loaded cores: a t5:tiny training step took 0.18-0.30 CPU-s on 2 threads, 0.015
    on 1; lxmert:tiny training steps were 22x slower on 2 threads)."""
    if not small:
        yield
        return
    torch = importlib.import_module("torch")  # by name: the core does not depend on torch
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
