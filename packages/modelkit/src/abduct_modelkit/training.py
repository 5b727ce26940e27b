"""What torch trainers and models share: averaging gradients over the ``torchrun`` ranks, an
evenly split global batch, seeds that depend only on (seed, position) so a resumed or sharded
run sees the same randomness, and one CPU thread for tiny networks.

The ranks themselves (``Ranks``, ``current_ranks``, ``process_group``) stay in ``abduct.kit``:
the core's runner shards evaluation with them. torch is imported by name when these are
called: importing this module never imports it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
from collections.abc import Iterator
from typing import Any

from abduct import AbductError
from abduct.kit import Ranks, current_ranks


def average_gradients(model: Any, ranks: Ranks | None = None) -> None:
    """Mean of ``model``'s parameter gradients over the ranks (one flat all-reduce)."""
    ranks = ranks or current_ranks()
    if ranks.world == 1:
        return
    torch = importlib.import_module("torch")
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    importlib.import_module("torch.distributed").all_reduce(flat)
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


@contextlib.contextmanager
def torch_seeded(seed: int) -> Iterator[None]:
    """Torch's CPU (and current CUDA device's) generators seeded with ``seed`` inside, restored
    after: sampling per request from its own seed makes texts independent of batching."""
    torch = importlib.import_module("torch")
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
    torch = importlib.import_module("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
