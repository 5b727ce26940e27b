"""What torch trainers and models share: averaging gradients over the ``torchrun`` ranks, an
evenly split global batch, seeds that depend only on (seed, position) so a resumed or sharded
run sees the same randomness, one CPU thread for tiny networks, and the skeleton of a training
run (``TrainConfig``, ``TrainingRun``, ``rank_device``).

The ranks themselves (``Ranks``, ``current_ranks``, ``process_group``) stay in ``abduct.kit``:
the core's runner shards evaluation with them. torch is imported by name when these are
called: importing this module never imports it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from abduct import AbductError
from abduct.kit import Ranks, current_ranks
from abduct_modelkit.checkpoints import append_log, check_resume_signature, log_rows_through, settings_signature

T = TypeVar("T")


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


# -- the run skeleton every trainer shares -----------------------------------------------------------
LOG = "train_log.jsonl"


def rank_device(device: str, ranks: Ranks | None = None) -> Any:
    """The torch device ``--device`` names (``auto``: cuda when available); under ``torchrun`` on
    GPUs each rank takes its own (``LOCAL_RANK``) and makes it current."""
    from abduct import Settings

    torch = importlib.import_module("torch")
    chosen = torch.device(Settings(device=device).torch_device())
    if chosen.type == "cuda" and (ranks or current_ranks()).world > 1:
        chosen = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        torch.cuda.set_device(chosen)
    return chosen


@dataclass
class TrainConfig:
    """The settings every ``abduct train`` command takes. A trainer's config subclasses it, adds
    its own fields (and its own defaults), and names in ``resume_keys`` the settings a resumed run
    must share with the run that wrote its checkpoint."""

    data_dir: Path
    out_dir: Path
    steps: int | None = None
    batch_size: int = 32
    lr: float = 1e-3
    log_every: int = 10
    seed: int = 0
    device: str = "auto"
    quiet: bool = False

    resume_keys: ClassVar[tuple[str, ...]] = ("batch_size", "lr", "seed")

    def resume_settings(self) -> dict[str, Any]:
        """The ``resume_keys`` and their values (``TrainingRun``'s ``signature`` is made of them)."""
        return {key: getattr(self, key) for key in self.resume_keys}


class TrainingRun:
    """What a training run does the same way in every trainer, on every rank: rank 0 makes the
    output folder; a run resumes from its checkpoint only when the settings match (and says so in
    one line); the loss of each step is averaged into a JSON-lines log every ``log_every`` steps;
    a checkpoint is made every ``every`` steps and at the last; validation keeps the best value.

    The trainer keeps what is its own (model, data, loss, the checkpoint's format) and hands the
    skeleton callables: ``restore`` to ``resume``, one step and the checkpoint to ``train``, the
    measure and the writer to ``validate``."""

    def __init__(self, name: str, config: TrainConfig, *, total: int, last: str, signature: Mapping[str, Any],
                 lower_is_better: bool = False, ranks: Ranks | None = None) -> None:
        self.name, self.out_dir, self.total = name, config.out_dir, total
        self.log_every, self.quiet = config.log_every, config.quiet
        self.last = config.out_dir / last  # what the resume line names
        self.signature = settings_signature(signature)
        self.lower_is_better = lower_is_better
        self.ranks = ranks or current_ranks()
        self.step = 0
        self.resumed = False
        self.best = math.inf if lower_is_better else -1.0
        self.history: list[dict[str, Any]] = []
        self.log_rows: list[dict[str, Any]] = []
        self._checkpointed: int | None = None
        self._window: list[float] = []
        self._started = time.perf_counter()

    @property
    def log_file(self) -> Path:
        return self.out_dir / LOG

    def say(self, text: str) -> None:
        """``[train NAME] text`` on stderr, from rank 0 unless quiet."""
        if self.ranks.is_main and not self.quiet:
            print(f"[train {self.name}] {text}", file=sys.stderr, flush=True)

    def start(self) -> None:
        """The output folder, made by rank 0 (the others write nothing)."""
        if self.ranks.is_main:
            self.out_dir.mkdir(parents=True, exist_ok=True)

    def resume(self, found: Path, stored_signature: Any, restore: Callable[[], int]) -> None:
        """Continue from the checkpoint ``found``: refused when it was written with other
        settings; ``restore`` loads the trainer's state and returns the checkpoint's step; the log
        keeps its rows up to that step."""
        check_resume_signature(found, stored_signature, self.signature)
        self.step = restore()
        self.log_rows = log_rows_through(self.log_file, self.step)
        self.resumed = True
        self.say(f"resuming from {self.last} at step {self.step}")

    def log(self, row: dict[str, Any]) -> None:
        append_log(self.log_rows, self.log_file, row, name=self.name, quiet=self.quiet)

    def due(self, every: int) -> bool:
        """Whether the step just taken is a multiple of ``every`` or the last one."""
        return self.step % every == 0 or self.step == self.total

    def checkpoint(self, save: Callable[[], None]) -> None:
        """Make a checkpoint now (``save``), remembering at which step."""
        save()
        self._checkpointed = self.step

    def train(self, batches: Iterable[T], step: Callable[[T], float], save: Callable[[], None], *, every: int,
              details: Callable[[], dict[str, Any]] | None = None) -> None:
        """The loop: ``step`` on each batch gives its loss; every ``log_every`` steps rank 0 logs
        their mean (with ``details()`` and the rate); every ``every`` steps and at the last,
        ``save`` makes a checkpoint. A fresh run that made none (no steps) makes one at the end."""
        self._started, self._window = time.perf_counter(), []
        for batch in batches:
            self._window.append(step(batch))
            self.step += 1
            if self.ranks.is_main and self.due(self.log_every):
                rate = len(self._window) / max(time.perf_counter() - self._started, 1e-9)
                self.log({"step": self.step, "loss": sum(self._window) / len(self._window),
                          **(details() if details else {}), "steps_per_s": rate})
                self._started, self._window = time.perf_counter(), []
            if self.due(every):
                self.checkpoint(save)
        if not self.resumed and self._checkpointed != self.step:
            self.checkpoint(save)

    def validate(self, metric: str, measure: Callable[[], float], best_saved: Callable[[], bool],
                 write: Callable[[float, bool], None]) -> None:
        """On rank 0: ``measure()`` is logged and kept in the history as ``metric``; ``write(value,
        is_best)`` saves it, best when it beats every earlier value or no best is saved yet. The
        other ranks wait for rank 0."""
        if self.ranks.is_main:
            value = measure()
            self.history.append({"step": self.step, metric: value})
            self.log({"step": self.step, metric: value})
            better = value < self.best if self.lower_is_better else value > self.best
            is_best = better or not best_saved()
            if is_best:
                self.best = min(value, self.best) if self.lower_is_better else max(value, self.best)
            write(value, is_best)
        if self.ranks.world > 1:
            importlib.import_module("torch.distributed").barrier()


def train_val_pairs(dataset: str, config: TrainConfig, val_limit: int | None = None) -> tuple[list[Any], list[Any]]:
    """The train and val pairs (``GroundedText``) of the dataset ``dataset`` names in
    ``config.data_dir``, the val pairs cut to ``val_limit``."""
    from abduct import Settings
    from abduct.host import load_pairs
    from abduct.kit import require_dir

    require_dir(config.data_dir, "data directory")
    settings = Settings(device=config.device, batch_size=config.batch_size, seed=config.seed)
    train = load_pairs(dataset, config.data_dir, "train", settings)
    val = load_pairs(dataset, config.data_dir, "val", settings)
    return list(train), list(val)[:val_limit]
