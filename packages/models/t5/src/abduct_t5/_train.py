"""Fine-tuning T5 on P(text | context): the Sherlock paper's clue -> inference oracle recipe.

Pairs come from a registered dataset's ``pairs()`` (``GroundedText``: ``visual.context`` is the
source, the clue; ``text`` the target, the inference). Adafactor at a constant lr 1e-3,
batch 32, 5 epochs, validation loss (token-weighted mean NLL) once an epoch, best kept — the
paper's recipe as defaults, every one a flag.

Resumable: every batch is a pure function of (seed, step) (the pairs walk through per-epoch
permutations as one stream) and dropout is seeded by the step, so a run killed at any point
and started again continues from ``last/`` exactly as an uninterrupted run would have.
Checkpoints are Hugging Face directories with safetensors weights (``best/`` and ``last/``;
``t5:OUT/best`` loads one). Under ``torchrun`` each rank trains on its slice of the global
batch and gradients are averaged (rank 0 validates and saves).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from abduct import AbductError, GroundedText, Settings, Spec
from abduct.host import load_pairs
from abduct.kit import Ranks, current_ranks, process_group, progress, require_dir
from abduct_modelkit import (
    PermutationStream,
    append_log,
    average_gradients,
    check_resume_signature,
    load_weights_only,
    log_rows_through,
    require_divisible_batch,
    seed_for,
    settings_signature,
)
from abduct_t5._loading import DEFAULT_TEMPLATE, load, save_checkpoint
from abduct_t5._model import autocast, check_template, fill, threads_for

BEST = "best"
LAST = "last"
STATE = "trainer_state.json"
OPTIMIZER = "optimizer.pt"
LOG = "train_log.jsonl"
DEFAULT_DATASET = "sherlock"
MAX_TOKENS = 512


@dataclass
class TrainConfig:
    data_dir: Path | None
    out_dir: Path
    dataset: str = DEFAULT_DATASET
    model: str = "t5:tiny"
    epochs: float = 5.0
    steps: int | None = None  # overrides epochs
    batch_size: int = 32
    lr: float = 1e-3
    template: str = DEFAULT_TEMPLATE
    eval_every: int | None = None  # steps between validations (default: once an epoch)
    val_limit: int | None = None
    log_every: int = 10
    seed: int = 0
    device: str = "auto"
    quiet: bool = False

    def resume_signature(self, total_steps: int) -> dict[str, Any]:
        """What a resumed run must share with the run that wrote ``last/``."""
        keys = ("dataset", "model", "batch_size", "lr", "template", "seed")
        return {**{k: getattr(self, k) for k in keys}, "total_steps": total_steps}


@dataclass(frozen=True)
class Pair:
    source: str
    target: str


# -- distributed helpers -----------------------------------------------------------------------
# -- batches -------------------------------------------------------------------------------------
class StepBatches:
    """``batch(step)``: this rank's slice of global batch ``step``, a pure function of
    (seed, step): positions ``step*B .. step*B+B-1`` of a stream of per-epoch permutations."""

    def __init__(self, pairs: Sequence[Pair], batch_size: int, seed: int, ranks: Ranks) -> None:
        require_divisible_batch(batch_size, ranks)
        self.pairs, self.batch_size, self.seed, self.ranks = list(pairs), batch_size, seed, ranks
        self.local = batch_size // ranks.world
        self._order = PermutationStream(len(self.pairs), seed)

    def _pair_at(self, position: int) -> Pair:
        return self.pairs[self._order.index(position)]

    def batch(self, step: int) -> list[Pair]:
        start = step * self.batch_size + self.ranks.rank * self.local
        return [self._pair_at(p) for p in range(start, start + self.local)]


# -- the trainer ---------------------------------------------------------------------------------
def resolve_device(device: str) -> torch.device:
    return torch.device(Settings(device=device).torch_device())


@dataclass
class Trainer:
    config: TrainConfig
    train_pairs: Sequence[Pair]
    val_pairs: Sequence[Pair]
    ranks: Ranks = field(default_factory=current_ranks)

    def __post_init__(self) -> None:
        config = self.config
        if not self.train_pairs:
            raise AbductError("no training pairs")
        check_template(config.template)
        spec = Spec.parse(config.model)
        if spec.name != "t5":
            raise AbductError(f"--model must be a t5 model (t5:tiny, t5:DIR, t5:NAME), got '{config.model}'")
        self.device = resolve_device(config.device)
        if self.device.type == "cuda" and self.ranks.world > 1:
            self.device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
            torch.cuda.set_device(self.device)
        loaded = load(spec.argument)
        self.model: Any = loaded.model
        self.model.to(self.device)
        self.tokenizer = loaded.tokenizer
        from transformers.optimization import Adafactor

        self.optimizer: Any = Adafactor(  # type: ignore[no-untyped-call]
            self.model.parameters(), lr=config.lr, scale_parameter=False, relative_step=False, warmup_init=False)
        per_epoch = math.ceil(len(self.train_pairs) / config.batch_size)
        self.total_steps = config.steps if config.steps is not None else max(1, math.ceil(config.epochs * per_epoch))
        self.eval_every = config.eval_every or per_epoch
        self.batches = StepBatches(self.train_pairs, config.batch_size, config.seed, self.ranks)
        self.step = 0
        self.best = math.inf
        self.history: list[dict[str, Any]] = []
        self.log_rows: list[dict[str, Any]] = []

    # -- tensors ----------------------------------------------------------------------------------
    def _encode(self, pairs: Sequence[Pair]) -> dict[str, torch.Tensor]:
        source = self.tokenizer([p.source for p in pairs], padding=True, truncation=True, max_length=MAX_TOKENS,
                                return_tensors="pt")
        target = self.tokenizer([p.target for p in pairs], padding=True, truncation=True, max_length=MAX_TOKENS,
                                return_tensors="pt")
        labels = target["input_ids"].masked_fill(target["attention_mask"] == 0, -100)
        return {"input_ids": source["input_ids"].to(self.device),
                "attention_mask": source["attention_mask"].to(self.device), "labels": labels.to(self.device)}

    def train_step(self, pairs: Sequence[Pair]) -> float:
        self.model.train()
        torch.manual_seed(seed_for(self.config.seed, 2, self.step))  # dropout: a function of the step
        with autocast(self.device):
            loss = self.model(**self._encode(pairs)).loss
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        average_gradients(self.model, self.ranks)
        self.optimizer.step()
        return float(loss.detach())

    def validation_loss(self) -> float:
        """Mean NLL per target token over the validation pairs (dropout off)."""
        if not self.val_pairs:
            return math.nan
        self.model.eval()
        total, tokens = 0.0, 0
        with torch.inference_mode(), autocast(self.device):
            for s in range(0, len(self.val_pairs), self.config.batch_size):
                batch = self._encode(self.val_pairs[s : s + self.config.batch_size])
                logits = self.model(**batch).logits.float()
                total += float(torch.nn.functional.cross_entropy(logits.transpose(1, 2), batch["labels"],
                                                                 ignore_index=-100, reduction="sum"))
                tokens += int((batch["labels"] != -100).sum())
        return total / max(tokens, 1)

    # -- checkpoints ------------------------------------------------------------------------------
    def _signature(self) -> str:
        return settings_signature(self.config.resume_signature(self.total_steps))

    def _write_dir(self, name: str, extra: dict[str, Any], optimizer: bool) -> None:
        """Write ``out/name`` whole, then swap it in: a kill leaves the old or the new one."""
        out = self.config.out_dir
        tmp, old, final = out / f"{name}.tmp", out / f"{name}.old", out / name
        shutil.rmtree(tmp, ignore_errors=True)
        save_checkpoint(self.model, self.tokenizer, tmp, self.config.template)
        if optimizer:
            torch.save(self.optimizer.state_dict(), tmp / OPTIMIZER)
        (tmp / STATE).write_text(json.dumps(extra))
        shutil.rmtree(old, ignore_errors=True)
        if final.exists():
            final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old, ignore_errors=True)

    def save_last(self) -> None:
        self._write_dir(LAST, {"step": self.step, "best_val_loss": self.best, "history": self.history,
                               "signature": self._signature()}, optimizer=True)

    def resume(self) -> bool:
        out = self.config.out_dir
        directory = next((d for d in (out / LAST, out / f"{LAST}.old") if (d / STATE).is_file()), None)
        if directory is None:
            return False
        state = json.loads((directory / STATE).read_text())
        check_resume_signature(directory, state.get("signature"), self._signature())
        self.model.load_state_dict(load_weights_only(directory / "model.safetensors", loader="t5 training state",
                                                     map_location=str(self.device)), strict=False)
        self.optimizer.load_state_dict(load_weights_only(directory / OPTIMIZER, loader="t5 optimizer state",
                                                         map_location=self.device))
        self.step, self.best, self.history = int(state["step"]), float(state["best_val_loss"]), list(state["history"])
        self.log_rows = log_rows_through(out / LOG, self.step)
        return True

    def validate(self) -> None:
        if self.ranks.is_main:
            value = self.validation_loss()
            self.history.append({"step": self.step, "val_loss": value})
            self._log({"step": self.step, "val_loss": value})
            if value < self.best or not (self.config.out_dir / BEST / STATE).is_file():
                self.best = min(value, self.best)
                self._write_dir(BEST, {"step": self.step, "val_loss": value}, optimizer=False)
            self.save_last()
        if self.ranks.world > 1:
            dist.barrier()

    def _log(self, row: dict[str, Any]) -> None:
        append_log(self.log_rows, self.config.out_dir / LOG, row, name="t5", quiet=self.config.quiet)

    def run(self) -> dict[str, Any]:
        with threads_for(self.model, self.device):
            return self._run()

    def _run(self) -> dict[str, Any]:
        config = self.config
        if self.ranks.is_main:
            config.out_dir.mkdir(parents=True, exist_ok=True)
        resumed = self.resume()
        if resumed and self.ranks.is_main and not config.quiet:
            print(f"[train t5] resuming from {config.out_dir / LAST} at step {self.step}", file=sys.stderr)
        if self.step == 0 and not resumed:
            self.validate()  # the starting point: best/ always exists
        window: list[float] = []
        started = time.perf_counter()
        steps = range(self.step, self.total_steps)
        for _ in progress(steps, desc="train t5", quiet=config.quiet or not self.ranks.is_main, unit="step"):
            window.append(self.train_step(self.batches.batch(self.step)))
            self.step += 1
            if self.ranks.is_main and (self.step % config.log_every == 0 or self.step == self.total_steps):
                rate = len(window) / max(time.perf_counter() - started, 1e-9)
                self._log({"step": self.step, "loss": sum(window) / len(window), "steps_per_s": rate})
                started, window = time.perf_counter(), []
            if self.step % self.eval_every == 0 or self.step == self.total_steps:
                self.validate()
        return {"step": self.step, "best_val_loss": self.best, "resumed": resumed, "history": self.history,
                "best": str(config.out_dir / BEST), "last": str(config.out_dir / LAST)}


# -- data ------------------------------------------------------------------------------------------
def text_pairs(pairs: Sequence[GroundedText], template: str, dataset: str, split: str) -> list[Pair]:
    """(prompt filled with the context, target text) of each pair; every pair needs a context."""
    out = []
    for p in pairs:
        if p.visual.context is None:
            raise AbductError(f"dataset '{dataset}' pair {p.id} ({split}) has no context (clue) for T5 to read")
        out.append(Pair(fill(template, p.visual.context), p.text))
    return out


def train_from_data_dir(config: TrainConfig) -> dict[str, Any]:
    """``abduct train t5``: the dataset's train/val pairs, then train."""
    assert config.data_dir is not None
    require_dir(config.data_dir, "data directory")
    settings = Settings(device=config.device, batch_size=config.batch_size, seed=config.seed)
    with process_group():
        train = text_pairs(load_pairs(config.dataset, config.data_dir, "train", settings), config.template,
                           config.dataset, "train")
        val = text_pairs(load_pairs(config.dataset, config.data_dir, "val", settings), config.template,
                         config.dataset, "val")
        if config.val_limit is not None:
            val = val[: config.val_limit]
        summary = Trainer(config, train, val).run()
        if current_ranks().is_main and not config.quiet:
            print(f"[train t5] done at step {summary['step']}; best validation loss {summary['best_val_loss']:.4f} "
                  f"-> {summary['best']}", file=sys.stderr)
        return summary
