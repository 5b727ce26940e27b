"""Training a cross-encoder (LXMERT, UNITER): Sherlock's triplet loss or CoSIm's 4-way head.

- **triplet** (Sherlock, the paper's loss, margin 0.2): for each positive (image, region,
  clue, inference), a negative with the same image and region and another example's
  inference, and one with another example's image and region and this inference;
  ``max(0, m - s+ + s-)`` for both, averaged;
- **cosim**: the four choices of a record scored as ``question [SEP] response [SEP] change
  [SEP] choice`` and cross-entropy over the four scores.

AdamW with linear warm-up. Every batch and every dropout mask is a function of (seed, step),
so a run killed at any point and started again from ``last/`` continues exactly as an
uninterrupted run (the same weights at every later step). Under ``torchrun`` each rank takes
its slice of the global batch and gradients are averaged (``abduct_modelkit.training``): the
update equals one process on the whole batch.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from abduct import AbductError, Settings, Spec, VisualInput
from abduct.host import get_registry, load_pairs
from abduct.kit import Ranks, current_ranks, process_group, require_dir
from abduct_modelkit import (
    PermutationStream,
    TrainingRun,
    average_gradients,
    is_small_on_cpu,
    one_thread_if,
    rank_device,
    require_divisible_batch,
    seed_for,
)
from abduct_modelkit import TrainConfig as BaseConfig
from abduct_regions.family import Family, existing_checkpoint, save_checkpoint
from abduct_regions.scoring import CrossEncoderScorer

LAST, BEST = "last", "best"
STATE_FILE = "trainer_state.pt"


@dataclass(frozen=True)
class Example:
    """A positive pair (triplet) or a record with its choices (cosim)."""

    visual: VisualInput
    texts: tuple[str, ...]  # the inference, or the four choices
    label: int = 0
    group: str | None = None


@dataclass
class TrainConfig(BaseConfig):
    data_dir: Path
    task: str = "sherlock"
    dataset: str | None = None
    model: str = "lxmert:tiny"
    steps: int = 1000
    batch_size: int = 16
    lr: float = 5e-5
    weight_decay: float = 0.01
    warmup: int = 100
    margin: float = 0.2
    checkpoint_every: int = 200
    val_limit: int = 64

    resume_keys = ("task", "dataset", "model", "batch_size", "lr", "weight_decay", "warmup", "margin", "seed")


# -- losses ------------------------------------------------------------------------------------
def triplet_loss(positive: torch.Tensor, other_text: torch.Tensor, other_visual: torch.Tensor,
                 margin: float) -> torch.Tensor:
    """Mean over the batch of the two hinge terms of the Sherlock paper's triplet loss."""
    relu = torch.nn.functional.relu
    return (relu(margin - positive + other_text) + relu(margin - positive + other_visual)).mean()


def choice_loss(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over each row's choice scores (``[B, K]``)."""
    return torch.nn.functional.cross_entropy(scores, labels)


# -- examples ----------------------------------------------------------------------------------
def load_examples(config: TrainConfig, split: str) -> list[Example]:
    settings = Settings(seed=config.seed)
    if config.task == "cosim":
        name = config.dataset or "cosim"
        records = get_registry().create("dataset", Spec.parse(name), settings).load(Path(config.data_dir), split)
        out = []
        for r in records:
            if not all(hasattr(r, a) for a in ("choices", "label", "visual")):
                raise AbductError(f"dataset '{name}' gives no multiple-choice records (choices, label, visual)")
            out.append(Example(r.visual(), tuple(r.choices), int(r.label)))
        return out
    pairs = load_pairs(config.dataset or "sherlock", config.data_dir, split, settings)
    return [Example(p.visual, (p.text,), 0, p.group) for p in pairs]


class Stream:
    """Global batch ``s`` is positions ``s*B .. s*B+B-1`` of a stream of per-epoch
    permutations (seeded by (seed, epoch)); a rank takes its contiguous slice."""

    def __init__(self, examples: Sequence[Example], batch_size: int, seed: int, ranks: Ranks) -> None:
        require_divisible_batch(batch_size, ranks)
        self.examples, self.batch_size, self.seed, self.ranks = list(examples), batch_size, seed, ranks
        self._order = PermutationStream(len(self.examples), seed)

    def at(self, position: int) -> Example:
        return self.examples[self._order.index(position)]

    def batch(self, step: int) -> tuple[list[Example], list[Example]]:
        """This rank's examples of global batch ``step`` and, for each, the partner whose
        text and image make its negatives: half a batch further on, skipping examples with the
        same text or image."""
        start = step * self.batch_size
        batch = [self.at(start + k) for k in range(self.batch_size)]
        local = self.batch_size // self.ranks.world
        mine = range(self.ranks.rank * local, (self.ranks.rank + 1) * local)
        partners = []
        for k in mine:
            partner = batch[(k + self.batch_size // 2) % self.batch_size]
            for shift in range(self.batch_size):
                candidate = batch[(k + self.batch_size // 2 + shift) % self.batch_size]
                if candidate.texts != batch[k].texts and candidate.visual.media != batch[k].visual.media:
                    partner = candidate
                    break
            partners.append(partner)
        return [batch[k] for k in mine], partners


# -- validation --------------------------------------------------------------------------------
def top1_within_groups(scorer: CrossEncoderScorer, examples: Sequence[Example]) -> float:
    """P@1 (x100) of image -> text retrieval within each group: the true text must score
    strictly above every other text of its group (a tie at the top is a miss)."""
    groups: dict[str | None, list[Example]] = {}
    for e in examples:
        groups.setdefault(e.group, []).append(e)
    hits = []
    for members in groups.values():
        if len(members) < 2:
            continue
        n = len(members)
        visuals = [members[i].visual for i in range(n) for _ in range(n)]
        texts = [members[j].texts[0] for _ in range(n) for j in range(n)]
        sims = scorer.score(visuals, texts).reshape(n, n)
        diagonal = np.diag(sims).copy()
        np.fill_diagonal(sims, -np.inf)
        hits.extend((diagonal > sims.max(axis=1)).tolist())
    return 100.0 * float(np.mean(hits)) if hits else 0.0


def choice_accuracy(scorer: CrossEncoderScorer, examples: Sequence[Example]) -> float:
    visuals = [e.visual for e in examples for _ in e.texts]
    texts = [t for e in examples for t in e.texts]
    flat = scorer.score(visuals, texts)
    correct, cursor = [], 0
    for e in examples:
        scores = flat[cursor : cursor + len(e.texts)]
        cursor += len(e.texts)
        correct.append(int(np.argmax(scores)) == e.label)
    return 100.0 * float(np.mean(correct)) if correct else 0.0


# -- the trainer -------------------------------------------------------------------------------
def _lr_factor(step: int, warmup: int) -> float:
    return min(1.0, (step + 1) / warmup) if warmup > 0 else 1.0


class Trainer:
    """One training run of a family's scorer (on every rank)."""

    def __init__(self, family: Family, config: TrainConfig, train: Sequence[Example], val: Sequence[Example],
                 scorer: CrossEncoderScorer) -> None:
        if not train:
            raise AbductError("no training examples")
        if config.task != "cosim" and config.batch_size < 2:
            raise AbductError("--batch-size must be at least 2: the triplet loss takes negatives from the batch")
        self.family, self.config, self.scorer = family, config, scorer
        self.ranks = current_ranks()
        self.stream = Stream(train, config.batch_size, config.seed, self.ranks)
        self.val = list(val)[: config.val_limit]
        net = scorer.net
        decay = [p for n, p in net.named_parameters() if p.ndim >= 2 and "embedding" not in n.lower()]
        rest = [p for n, p in net.named_parameters() if not (p.ndim >= 2 and "embedding" not in n.lower())]
        self.optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                            {"params": rest, "weight_decay": 0.0}], lr=config.lr)
        self.run_state = TrainingRun(family.name, config, total=config.steps, last=LAST,
                                     signature=config.resume_settings(), ranks=self.ranks)

    @property
    def metric_name(self) -> str:
        return "val_accuracy" if self.config.task == "cosim" else "val_p_at_1"

    # checkpoints -----------------------------------------------------------------------------
    def _state_bytes(self) -> bytes:
        run = self.run_state
        buffer = io.BytesIO()
        torch.save({"optimizer": self.optimizer.state_dict(), "step": run.step, "best": run.best,
                    "history": json.dumps(run.history), "signature": run.signature}, buffer)
        return buffer.getvalue()

    def _write(self, value: float, is_best: bool) -> None:
        """``best/`` when ``value`` is the best so far, then ``last/`` with the trainer's state (rank 0)."""
        if is_best:
            save_checkpoint(self.family, self.scorer, self.config.out_dir / BEST)
        save_checkpoint(self.family, self.scorer, self.config.out_dir / LAST, {STATE_FILE: self._state_bytes()})

    def resume(self) -> None:
        found = existing_checkpoint(self.config.out_dir / LAST)
        if found is None or not (found / STATE_FILE).is_file():
            return
        state = torch.load(str(found / STATE_FILE), map_location="cpu", weights_only=True)

        def restore() -> int:
            net, _ = self.family.load_dir(found, self.config.seed)
            self.scorer.net.load_state_dict(net.state_dict())
            self.optimizer.load_state_dict(state["optimizer"])
            self.run_state.best, self.run_state.history = float(state["best"]), json.loads(state["history"])
            return int(state["step"])

        self.run_state.resume(found, state.get("signature"), restore)

    def validation_value(self) -> float:
        was = self.scorer.net.training
        measure = choice_accuracy if self.config.task == "cosim" else top1_within_groups
        value = measure(self.scorer, self.val) if self.val else 0.0
        self.scorer.net.train(was)
        return value

    def _best_saved(self) -> bool:
        return existing_checkpoint(self.config.out_dir / BEST) is not None

    def validate(self) -> None:
        self.run_state.validate(self.metric_name, self.validation_value, self._best_saved, self._write)

    # the loop --------------------------------------------------------------------------------
    def loss(self, mine: list[Example], partners: list[Example]) -> torch.Tensor:
        forward = self.scorer.forward
        if self.config.task == "cosim":
            k = len(mine[0].texts)
            scores = forward([e.visual for e in mine for _ in e.texts], [t for e in mine for t in e.texts])
            labels = torch.tensor([e.label for e in mine], device=scores.device)
            return choice_loss(scores.view(len(mine), k), labels)
        n = len(mine)
        visuals = [e.visual for e in mine] + [e.visual for e in mine] + [p.visual for p in partners]
        texts = [e.texts[0] for e in mine] + [p.texts[0] for p in partners] + [e.texts[0] for e in mine]
        scores = forward(visuals, texts)
        return triplet_loss(scores[:n], scores[n : 2 * n], scores[2 * n :], self.config.margin)

    def train_step(self, step: int) -> float:
        mine, partners = self.stream.batch(step)
        net = self.scorer.net
        net.train()
        for group in self.optimizer.param_groups:
            group["lr"] = self.config.lr * _lr_factor(step, self.config.warmup)
        torch.manual_seed(seed_for(self.config.seed, 2, step, self.ranks.rank))  # dropout: a function of the step
        loss = self.loss(mine, partners)
        self.optimizer.zero_grad(set_to_none=True)
        torch.autograd.backward(loss)
        average_gradients(net)
        self.optimizer.step()
        return float(loss.detach())

    def run(self) -> dict[str, Any]:
        config, run = self.config, self.run_state
        run.start()
        self.resume()
        with one_thread_if(is_small_on_cpu(self.scorer.net, self.scorer.device)):
            run.train(range(run.step, config.steps), self.train_step, self.validate, every=config.checkpoint_every,
                      details=lambda: {"lr": self.optimizer.param_groups[0]["lr"]})
        return {"step": run.step, "best": run.best, "metric": self.metric_name, "resumed": run.resumed,
                "history": run.history, "best_dir": str(config.out_dir / BEST), "last_dir": str(config.out_dir / LAST)}


def train(family: Family, config: TrainConfig) -> dict[str, Any]:
    """``abduct train <family>``: the dataset's train and val examples, then the run."""
    from abduct_regions.family import build_scorer, options_from_spec

    require_dir(config.data_dir, "data directory")
    spec = Spec.parse(config.model)
    if spec.name != family.name:
        raise AbductError(f"--model must be a {family.name} model ({family.name}:tiny or {family.name}:DIR), got '{config.model}'")
    with process_group():
        train_examples = load_examples(config, "train")
        val_examples = load_examples(config, "val")
        device = str(rank_device(config.device))
        settings = Settings(device=device, batch_size=max(4 * config.batch_size, 64), seed=config.seed)
        scorer = build_scorer(family, spec, settings, options_from_spec(spec))
        trainer = Trainer(family, config, train_examples, val_examples, scorer)
        summary = trainer.run()
        trainer.run_state.say(f"done at step {summary['step']}; best {summary['metric']} {summary['best']:.2f} "
                              f"-> {summary['best_dir']}")
        return summary


def train_from_options(family: Family, options: dict[str, Any]) -> dict[str, Any]:
    """The click command's keyword arguments -> ``train``."""
    names = {f.name for f in fields(TrainConfig)}
    return train(family, TrainConfig(**{k: v for k, v in options.items() if k in names}))
