"""Contrastive fine-tuning of a CLIP model on (image + region, text) pairs.

Symmetric InfoNCE with CLIP's learned temperature, AdamW with linear warm-up, the paper's
augmentation on each widescreen view, and the multitask clue/inference mode. Every batch is
a pure function of (seed, step), so a run killed at any point and resumed from its last
checkpoint continues with exactly the batches an uninterrupted run would have seen.

Under ``torchrun`` each rank encodes its slice of the global batch; embeddings are gathered
with gradients so every rank computes the loss over the whole global batch, and gradients
are averaged across ranks: the update equals one process training on the global batch.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset

from abduct import AbductError, GroundedText, Spec, VisualInput
from abduct.host import bind_options
from abduct.kit import Ranks, atomic_write_bytes, current_ranks, process_group
from abduct_clip._encode import (
    autocast,
    cpu_threads_beside_workers,
    encode_images,
    encode_texts,
    image_features,
    text_features,
)
from abduct_clip._imaging import Preprocess, collate_views, raise_if_error
from abduct_clip._loading import LoadedModel, build, checkpoint_meta
from abduct_clip.factory import make_clip
from abduct_clip.settings import TEXT_PREFIXES, ClipSettings, clip_settings
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

LAST = "last.pt"
BEST = "best.pt"
DEFAULT_DATASET = "sherlock"
MAX_LOGIT_SCALE = math.log(100.0)  # CLIP clamps its temperature at 100


@dataclass(frozen=True)
class Example:
    """One training pair; ``clue`` is used by the multitask mode."""

    visual: VisualInput
    inference: str
    clue: str | None = None
    chunk: str | None = None  # validation retrieval chunk


@dataclass
class TrainConfig(BaseConfig):
    dataset: str = DEFAULT_DATASET
    model: str = "clip:tiny"
    steps: int = 3000
    batch_size: int = 64
    lr: float = 1e-5
    weight_decay: float = 0.2
    warmup: int = 500
    multitask: bool = False
    no_augment: bool = False
    checkpoint_every: int = 300
    val_limit: int | None = None
    workers: int | None = None

    resume_keys = ("model", "batch_size", "lr", "weight_decay", "warmup", "multitask", "no_augment", "seed")

    def resume_settings(self) -> dict[str, Any]:
        signature = super().resume_settings()
        if self.dataset != DEFAULT_DATASET:  # absent for the default, so earlier runs still resume
            signature["dataset"] = self.dataset
        return signature


# -- distributed helpers ---------------------------------------------------------------------
class _GatherWithGrad(torch.autograd.Function):
    """all_gather whose backward sends every rank's gradient for a slice back to its owner
    (an all-reduce of the gathered gradient, then this rank's slice)."""

    @staticmethod
    def forward(ctx: Any, local: torch.Tensor) -> torch.Tensor:
        ctx.rank, ctx.count = dist.get_rank(), local.shape[0]
        parts = [torch.empty_like(local) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, local.contiguous())
        return torch.cat(parts)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.contiguous()
        dist.all_reduce(grad)
        return grad[ctx.rank * ctx.count : (ctx.rank + 1) * ctx.count]


def gather_with_grad(local: torch.Tensor) -> torch.Tensor:
    """Every rank's rows, in rank order; gradients flow back to the rank that made them."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return local
    return _GatherWithGrad.apply(local)  # type: ignore[no-any-return]


def contrastive_loss(images: torch.Tensor, texts: torch.Tensor, logit_scale: torch.Tensor) -> torch.Tensor:
    """Symmetric InfoNCE over the global batch: row i's image and text are the positives."""
    images, texts = gather_with_grad(images), gather_with_grad(texts)
    logits = logit_scale.exp() * images @ texts.T
    labels = torch.arange(len(logits), device=logits.device)
    return (torch.nn.functional.cross_entropy(logits, labels) + torch.nn.functional.cross_entropy(logits.T, labels)) / 2


# -- the batches -----------------------------------------------------------------------------
class StepBatches(Dataset):  # type: ignore[type-arg]
    """Item ``s`` is this rank's slice of global batch ``s``: (views, owner, texts).

    The global batches walk through per-epoch permutations of the examples as one stream,
    and every random choice of an example (augmentation, clue or inference) is seeded by
    its position in that stream.
    """

    def __init__(
        self, examples: Sequence[Example], preprocess: Preprocess, settings: ClipSettings, *,
        batch_size: int, first_step: int, last_step: int, seed: int, multitask: bool, augment: bool,
        ranks: Ranks,
    ) -> None:
        require_divisible_batch(batch_size, ranks)
        self.examples = list(examples)
        self.preprocess, self.settings = preprocess, settings
        self.batch_size, self.local = batch_size, batch_size // ranks.world
        self.first_step, self.last_step = first_step, last_step
        self.seed, self.multitask, self.augment, self.ranks = seed, multitask, augment, ranks
        self._order = PermutationStream(len(self.examples), seed)

    def __len__(self) -> int:
        return max(0, self.last_step - self.first_step)

    def _example_at(self, position: int) -> int:
        return self._order.index(position)

    def text_for(self, example: Example, g: torch.Generator) -> str:
        if self.multitask:
            use_clue = example.clue is not None and float(torch.rand((), generator=g)) < 0.5
            return TEXT_PREFIXES["clue"] + example.clue if use_clue else TEXT_PREFIXES["inference"] + example.inference  # type: ignore[operator]
        return self.settings.format_text(example.inference)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor, list[str]] | AbductError:
        try:
            return self._batch(self.first_step + index)
        except AbductError as exc:
            return exc  # raised again in the main process (see run)

    def _batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
        start = step * self.batch_size + self.ranks.rank * self.local
        items, texts = [], []
        for position in range(start, start + self.local):
            example = self.examples[self._example_at(position)]
            g = torch.Generator().manual_seed(seed_for(self.seed, 1, position))
            if self.augment:
                items.append(self.preprocess.augmented_views(example.visual, g))
            else:
                items.append(self.preprocess.evaluation_views(example.visual))
            texts.append(self.text_for(example, g))
        views, owner = collate_views(items)
        return views, owner, texts


# -- validation --------------------------------------------------------------------------------
def top1_fraction(sims: np.ndarray) -> float:
    """Share of rows whose diagonal entry beats every other entry strictly (ties miss)."""
    if len(sims) < 2:
        return 1.0
    sims = np.array(sims, dtype=np.float64)
    diagonal = np.diag(sims).copy()
    np.fill_diagonal(sims, -np.inf)
    return float(np.mean(diagonal > sims.max(axis=1)))


def retrieval_p_at_1(model: LoadedModel, examples: Sequence[Example], text_prefix: str, *, batch_size: int,
                     workers: int, device: torch.device) -> float:
    """Validation P@1 (×100) within each retrieval chunk: the true inference must outscore
    every other inference of the chunk strictly (a tie at the top is a miss)."""
    chunks: dict[str | None, list[Example]] = {}
    for example in examples:
        chunks.setdefault(example.chunk, []).append(example)
    was_training = model.model.training
    model.model.eval()
    scores = []
    for members in chunks.values():
        v = encode_images(model.model, model.preprocess, [e.visual for e in members],
                          batch_size=batch_size, workers=workers, device=device)
        t = encode_texts(model.model, model.tokenizer, [text_prefix + e.inference for e in members],
                         batch_size=batch_size, device=device)
        scores.append(top1_fraction((v @ t.T).numpy()))
    model.model.train(was_training)
    return 100.0 * float(np.mean(scores)) if scores else 0.0


# -- checkpoints -----------------------------------------------------------------------------
def _save(path: Path, payload: dict[str, Any]) -> None:
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def _lr_factor(step: int, warmup: int) -> float:
    """Linear warm-up from lr/warmup to lr over ``warmup`` steps, then constant."""
    return min(1.0, (step + 1) / warmup) if warmup > 0 else 1.0


class Trainer:
    """Owns the model, optimiser and checkpoints of one training run (on every rank)."""

    def __init__(self, config: TrainConfig, train: Sequence[Example], val: Sequence[Example]) -> None:
        if not train:
            raise AbductError("no training examples")
        if config.batch_size < 2:
            raise AbductError("--batch-size must be at least 2: contrastive training needs negatives")
        self.config, self.train_examples, self.val_examples = config, list(train), list(val)
        self.ranks = current_ranks()
        self.device = rank_device(config.device, self.ranks)
        settings = settings_of_model(config.model)
        if config.workers is not None:
            settings = settings.with_options(workers=config.workers)
        if config.multitask:
            settings = settings.with_options(prefix="inference")  # evaluation text of multitask models
        self.loaded = build(settings, seed=config.seed, device=str(self.device))
        self.settings = self.loaded.settings
        self.model: Any = self.loaded.model
        decay = [p for n, p in self.model.named_parameters() if p.ndim >= 2 and "embedding" not in n]
        no_decay = [p for n, p in self.model.named_parameters() if not (p.ndim >= 2 and "embedding" not in n)]
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=config.lr, betas=(0.9, 0.98), eps=1e-6,
        )
        self.run_state = TrainingRun("clip", config, total=config.steps, last=LAST,
                                     signature=config.resume_settings(), ranks=self.ranks)

    # checkpoint state ------------------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        return checkpoint_meta(self.loaded.arch, self.settings)

    def _write(self, value: float, is_best: bool) -> None:
        """``best.pt`` when ``value`` is the best so far, then ``last.pt`` (rank 0)."""
        run, out = self.run_state, self.config.out_dir
        if is_best:
            _save(out / BEST, {"model_state_dict": self.model.state_dict(),
                               "abduct": {**self.meta(), "step": run.step, "val_p_at_1": value}})
        _save(out / LAST, {
            "model_state_dict": self.model.state_dict(),
            "abduct": self.meta(),
            "optimizer": self.optimizer.state_dict(),
            "step": run.step,
            "best_p_at_1": run.best,
            "history": json.dumps(run.history),
            "signature": run.signature,
        })

    def resume(self) -> None:
        path = self.config.out_dir / LAST
        if not path.is_file():
            return
        state = load_weights_only(path, loader="clip training state", map_location=self.device)

        def restore() -> int:
            self.model.load_state_dict(state["model_state_dict"])
            self.optimizer.load_state_dict(state["optimizer"])
            self.run_state.best, self.run_state.history = float(state["best_p_at_1"]), json.loads(state["history"])
            return int(state["step"])

        self.run_state.resume(path, state.get("signature"), restore)

    def validation_p_at_1(self) -> float:
        if not self.val_examples:
            return 0.0
        return retrieval_p_at_1(self.loaded, self.val_examples, TEXT_PREFIXES[self.settings.prefix],
                                batch_size=self.config.batch_size, workers=self.settings.num_workers,
                                device=self.device)

    def validate(self) -> None:
        """Validation P@1 on rank 0, which writes best.pt (the best model so far) and last.pt."""
        best_saved = (self.config.out_dir / BEST).is_file
        self.run_state.validate("val_p_at_1", self.validation_p_at_1, best_saved, self._write)

    # the loop ----------------------------------------------------------------------------------
    def train_step(self, batch: tuple[torch.Tensor, torch.Tensor, list[str]] | AbductError) -> float:
        raise_if_error(batch)
        views, owner, texts = batch  # type: ignore[misc]
        self.model.train()
        for group in self.optimizer.param_groups:
            group["lr"] = self.config.lr * _lr_factor(self.run_state.step, self.config.warmup)
        tokens = self.loaded.tokenizer(texts).to(self.device)
        with autocast(self.device):
            images = image_features(self.model, views.to(self.device, non_blocking=True), owner, len(texts))
            embedded = text_features(self.model, tokens)
            loss = contrastive_loss(images, embedded, self.model.logit_scale)
        self.optimizer.zero_grad(set_to_none=True)
        torch.autograd.backward(loss)
        average_gradients(self.model)
        self.optimizer.step()
        with torch.no_grad():
            self.model.logit_scale.clamp_(0, MAX_LOGIT_SCALE)
        return float(loss.detach())

    def _details(self) -> dict[str, Any]:
        return {"lr": self.optimizer.param_groups[0]["lr"], "temperature": float(self.model.logit_scale.detach().exp())}

    def run(self) -> dict[str, Any]:
        config, run = self.config, self.run_state
        run.start()
        self.resume()
        batches = StepBatches(
            self.train_examples, self.loaded.preprocess, self.settings, batch_size=config.batch_size,
            first_step=run.step, last_step=config.steps, seed=config.seed, multitask=config.multitask,
            augment=not config.no_augment, ranks=self.ranks,
        )
        loader = DataLoader(batches, batch_size=None, shuffle=False, num_workers=self.settings.num_workers,
                            pin_memory=self.device.type == "cuda")
        with cpu_threads_beside_workers(loader.num_workers, self.device):
            run.train(loader, self.train_step, self.validate, every=config.checkpoint_every, details=self._details)
        return {"step": run.step, "best_p_at_1": run.best, "resumed": run.resumed, "history": run.history,
                "best": str(config.out_dir / BEST), "last": str(config.out_dir / LAST)}


def settings_of_model(model: str) -> ClipSettings:
    """The settings a ``clip:...`` spec selects, its options typed as the ``clip`` factory types them."""
    spec = Spec.parse(model)
    if spec.name != "clip":
        raise AbductError(f"--model must be a clip model (clip:tiny, clip:ViT-B-16@openai, clip:FILE), got '{model}'")
    return clip_settings(spec, **bind_options("model", "clip", make_clip, spec.option_dict()))


def examples_from_pairs(pairs: Sequence[GroundedText]) -> list[Example]:
    """Training examples from a dataset's pairs, in the dataset's order: the text is the
    target (the inference), ``visual.context`` the clue (multitask mode), ``group`` the
    validation retrieval chunk."""
    return [Example(p.visual, p.text, p.visual.context, p.group) for p in pairs]


def train_from_data_dir(config: TrainConfig) -> dict[str, Any]:
    """``abduct train clip``: the dataset's train/val pairs, then train."""
    with process_group():
        train, val = train_val_pairs(config.dataset, config, config.val_limit)
        trainer = Trainer(config, examples_from_pairs(train), examples_from_pairs(val))
        summary = trainer.run()
        trainer.run_state.say(f"done at step {summary['step']}; best validation P@1 {summary['best_p_at_1']:.2f} "
                              f"-> {summary['best']}")
        return summary
