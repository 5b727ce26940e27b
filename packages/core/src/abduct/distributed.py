"""What torch trainers (and, later, sharded evaluation) share under ``torchrun``: this
process's rank, joining the process group, averaging gradients, and seeds that depend only
on (seed, position) so a resumed or sharded run sees the same randomness.

The core does not depend on torch: torch is imported by name when these are called, which
only torch plugins do.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


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


def join_process_group() -> bool:
    """Join the process group when started by torchrun (WORLD_SIZE > 1): NCCL on GPUs, gloo on
    CPUs. True when this call made the group (the caller then destroys it)."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or _dist().is_initialized():
        return False
    cuda = importlib.import_module("torch").cuda.is_available()
    _dist().init_process_group("nccl" if cuda else "gloo")
    return True


@contextlib.contextmanager
def process_group() -> Iterator[Ranks]:
    """Inside: this process's ranks, in the torchrun group when there is one; a group this
    made is left again on the way out, also on errors."""
    started = join_process_group()
    try:
        yield current_ranks()
    finally:
        if started:
            _dist().destroy_process_group()


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
