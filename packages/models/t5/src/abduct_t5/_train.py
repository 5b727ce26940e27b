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
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from abduct import AbductError, GroundedText, Spec
from abduct.kit import Ranks, current_ranks, process_group, progress
from abduct_modelkit import (
    PermutationStream,
    TrainingRun,
    average_gradients,
    load_weights_only,
    rank_device,
    require_divisible_batch,
    seed_for,
    train_val_pairs,
)
from abduct_modelkit import TrainConfig as BaseConfig
from abduct_t5._loading import DEFAULT_TEMPLATE, load, save_checkpoint
from abduct_t5._model import autocast, check_template, fill, threads_for

BEST = "best"
LAST = "last"
STATE = "trainer_state.json"
OPTIMIZER = "optimizer.pt"
DEFAULT_DATASET = "sherlock"
MAX_TOKENS = 512


@dataclass
class TrainConfig(BaseConfig):
    dataset: str = DEFAULT_DATASET
    model: str = "t5:tiny"
    epochs: float = 5.0
    steps: int | None = None  # overrides epochs
    batch_size: int = 32
    lr: float = 1e-3
    template: str = DEFAULT_TEMPLATE
    eval_every: int | None = None  # steps between validations (default: once an epoch)
    val_limit: int | None = None

    resume_keys = ("dataset", "model", "batch_size", "lr", "template", "seed")


@dataclass(frozen=True)
class Pair:
    source: str
    target: str


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
        self.device = rank_device(config.device, self.ranks)
        loaded = load(spec.argument)
        self.model: Any = loaded.model
        self.model.to(self.device)
        self.tokenizer = loaded.tokenizer
        from transformers.optimization import Adafactor

        self.optimizer: Any = Adafactor(  # type: ignore[no-untyped-call]
            self.model.parameters(), lr=config.lr, scale_parameter=False, relative_step=False, warmup_init=False)
        per_epoch = math.ceil(len(self.train_pairs) / config.batch_size)
        total = config.steps if config.steps is not None else max(1, math.ceil(config.epochs * per_epoch))
        self.eval_every = config.eval_every or per_epoch
        self.batches = StepBatches(self.train_pairs, config.batch_size, config.seed, self.ranks)
        self.run_state = TrainingRun("t5", config, total=total, last=LAST, lower_is_better=True, ranks=self.ranks,
                                     signature={**config.resume_settings(), "total_steps": total})

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
        torch.manual_seed(seed_for(self.config.seed, 2, self.run_state.step))  # dropout: a function of the step
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

    def _write(self, value: float, is_best: bool) -> None:
        run = self.run_state
        if is_best:
            self._write_dir(BEST, {"step": run.step, "val_loss": value}, optimizer=False)
        self._write_dir(LAST, {"step": run.step, "best_val_loss": run.best, "history": run.history,
                               "signature": run.signature}, optimizer=True)

    def resume(self) -> None:
        out = self.config.out_dir
        directory = next((d for d in (out / LAST, out / f"{LAST}.old") if (d / STATE).is_file()), None)
        if directory is None:
            return
        state = json.loads((directory / STATE).read_text())

        def restore() -> int:
            self.model.load_state_dict(load_weights_only(directory / "model.safetensors", loader="t5 training state",
                                                         map_location=str(self.device)), strict=False)
            self.optimizer.load_state_dict(load_weights_only(directory / OPTIMIZER, loader="t5 optimizer state",
                                                             map_location=self.device))
            self.run_state.best, self.run_state.history = float(state["best_val_loss"]), list(state["history"])
            return int(state["step"])

        self.run_state.resume(directory, state.get("signature"), restore)

    def validate(self) -> None:
        """Validation loss on rank 0, which writes ``best/`` (when it is the lowest) and ``last/``."""
        best_saved = (self.config.out_dir / BEST / STATE).is_file
        self.run_state.validate("val_loss", self.validation_loss, best_saved, self._write)

    def run(self) -> dict[str, Any]:
        with threads_for(self.model, self.device):
            return self._run()

    def _run(self) -> dict[str, Any]:
        config, run = self.config, self.run_state
        run.start()
        self.resume()
        if not run.resumed:
            run.checkpoint(self.validate)  # the starting point: best/ always exists
        steps = progress(range(run.step, run.total), desc="train t5", quiet=config.quiet or not self.ranks.is_main,
                         unit="step")
        run.train(steps, lambda _: self.train_step(self.batches.batch(run.step)), self.validate, every=self.eval_every)
        return {"step": run.step, "best_val_loss": run.best, "resumed": run.resumed, "history": run.history,
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
    with process_group():
        train, val = train_val_pairs(config.dataset, config, config.val_limit)
        trainer = Trainer(config, text_pairs(train, config.template, config.dataset, "train"),
                          text_pairs(val, config.template, config.dataset, "val"))
        summary = trainer.run()
        trainer.run_state.say(f"done at step {summary['step']}; best validation loss {summary['best_val_loss']:.4f} "
                              f"-> {summary['best']}")
        return summary
