"""``abduct train var``: the small generator on the training split's event chains.

The CLIP tower is frozen, so each training event is embedded once before the loop. Every
global batch is a pure function of (seed, step) — per-epoch permutations of the samples as one
stream, as ``abduct train clip`` does — so a run killed at any point and resumed from
``last.pt`` sees exactly the batches an uninterrupted run would have. Under ``torchrun`` each
rank takes its slice of the global batch and gradients are averaged across ranks
(``abduct_modelkit.training``): the update equals one process training on the global batch.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from abduct import AbductError
from abduct.kit import atomic_write_bytes, process_group, require_dir
from abduct_modelkit import (
    PermutationStream,
    TrainingRun,
    average_gradients,
    load_weights_only,
    one_thread_if,
    rank_device,
    require_divisible_batch,
)
from abduct_modelkit import TrainConfig as BaseConfig
from abduct_var._checkpoint import FORMAT, check_checkpoint, load_into, resume_step
from abduct_var._encode import EventEncoder
from abduct_var._net import HEADS, ChainGenerator, build_vocab, encode_words
from abduct_var._samples import collate, embed, standardisation, training_samples
from abduct_var.loader import load_split

LAST = "last.pt"


@dataclass
class TrainConfig(BaseConfig):
    data_dir: Path
    videos: Path | None = None
    encoder: str = "clip:tiny"
    steps: int = 2000
    batch_size: int = 32
    lr: float = 3e-3
    width: int = 64
    frames: int = 4
    checkpoint_every: int = 200
    log_every: int = 50

    resume_keys = ("encoder", "batch_size", "lr", "width", "frames", "seed")


def _save(path: Path, payload: dict[str, Any]) -> None:
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def _batch_indices(count: int, step: int, batch: int, seed: int) -> list[int]:
    """Global batch ``step``: positions ``step*batch ...`` of the per-epoch permutation stream."""
    order = PermutationStream(count, seed)
    return [order.index(position) for position in range(step * batch, (step + 1) * batch)]


def _check(config: TrainConfig) -> None:
    """Settings the model cannot use, refused before any data is read."""
    if not (math.isfinite(config.lr) and config.lr > 0):
        raise AbductError(f"train var: --lr {config.lr} is not a positive finite learning rate")
    if config.width % HEADS:
        raise AbductError(f"train var: --width {config.width} is not a multiple of the {HEADS} attention heads")


def train(config: TrainConfig) -> dict[str, Any]:
    _check(config)
    require_dir(config.data_dir, "data directory")
    with process_group() as ranks:
        device = rank_device(config.device, ranks)
        require_divisible_batch(config.batch_size, ranks)
        examples, _ = load_split(config.data_dir, "train")
        videos = config.videos or config.data_dir / "videos"
        samples, events = training_samples(examples, videos)
        encoder = EventEncoder(config.encoder, frames=config.frames, seed=config.seed, device=str(device))
        try:
            standard = standardisation(torch.from_numpy(encoder.encode(events)))
            table = embed(encoder, events, standard).to(device)
        finally:
            encoder.close()
        vocab = build_vocab([s.sentence for s in samples])
        index = {w: i for i, w in enumerate(vocab)}
        tokens = [encode_words(s.sentence, index) for s in samples]
        torch.manual_seed(config.seed)
        model = ChainGenerator(encoder.dim, len(vocab), config.width).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.01)
        run = TrainingRun("var", config, total=config.steps, last=LAST, signature=config.resume_settings(), ranks=ranks)
        run.start()
        last = config.out_dir / LAST
        if last.is_file():
            state = load_weights_only(last, loader="var-gen checkpoint", map_location=device)
            checked = check_checkpoint(last, state)  # a dict, every field of the generator's checked

            def restore() -> int:
                if checked.vocab != vocab:
                    raise AbductError(f"{last} was written by a run on other data (another vocabulary); "
                                      "use another --out or delete it")
                load_into(model, checked.model_state, last, "model_state_dict")
                return resume_step(last, state, optimizer)

            run.resume(last, state.get("signature"), restore)
        meta = {"format": FORMAT, "vocab": vocab, "width": config.width, "clip_dim": encoder.dim,
                "encoder": config.encoder, "frames": config.frames, "seed": config.seed}

        def save() -> None:
            if ranks.is_main:
                _save(last, {"model_state_dict": model.state_dict(), "optimizer": optimizer.state_dict(),
                             "step": run.step, "signature": run.signature, "meta": meta,
                             "visual_state": encoder.visual_state(),
                             "feature_mean": standard[0], "feature_std": standard[1], "config": json.dumps(asdict(config), default=str)})

        local = config.batch_size // ranks.world

        def step(at: int) -> float:
            chosen = _batch_indices(len(samples), at, config.batch_size, config.seed)
            mine = chosen[ranks.rank * local:(ranks.rank + 1) * local]
            batch = {k: v.to(device) for k, v in collate([samples[i] for i in mine], table,
                                                         [tokens[i] for i in mine]).items()}
            memory = model.memory(batch["events"], batch["masked"], batch["target"], batch["padding"])
            ids = batch["tokens"]
            logits = model.logits(memory, batch["padding"], ids[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1),
                                                     ignore_index=0)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            average_gradients(model, ranks)
            optimizer.step()
            return float(loss.detach())

        model.train()
        with one_thread_if(device.type == "cpu"):  # a tiny network: one thread pays best
            run.train(range(run.step, config.steps), step, save, every=config.checkpoint_every)
        summary = {"step": run.step, "last": str(last), "samples": len(samples), "events": len(events),
                   "vocab": len(vocab), "loss": run.log_rows[-1]["loss"] if run.log_rows else None}
        run.say(f"done at step {run.step} -> {last}")
        return summary
