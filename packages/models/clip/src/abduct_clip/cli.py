"""The command this package adds: ``abduct train clip``.

Only click here: torch and open_clip load when a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from abduct.kit import NON_NEGATIVE, POSITIVE, settings_from, settings_options


@click.command("clip")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--dataset", default="sherlock", show_default=True,
              help="Registered dataset giving the (image, region, text) training pairs (see `abduct datasets`).")
@click.option("--model", "model", default="clip:tiny", show_default=True, help="Starting model spec (clip:...).")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Checkpoint directory.")
@click.option("--steps", type=click.IntRange(min=1), default=3000, show_default=True)
@settings_options(device="auto", batch_size=64, batch_help="Global batch size.")
@click.option("--lr", type=POSITIVE, default=1e-5, show_default=True)
@click.option("--weight-decay", type=NON_NEGATIVE, default=0.2, show_default=True)
@click.option("--warmup", type=click.IntRange(min=0), default=500, show_default=True, help="Linear warm-up steps.")
@click.option("--multitask", is_flag=True, help="Train on clues and inferences (prefixes 'clue: '/'inference: ').")
@click.option("--no-augment", is_flag=True, help="Turn off the random crop/flip/colour augmentation.")
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=300, show_default=True)
@click.option("--val-limit", type=click.IntRange(min=1), default=None, help="Validate on the first N pairs.")
@click.option("--log-every", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--workers", type=click.IntRange(min=0), default=None, help="Data-loader workers (default min(2, cpus)).")
@click.option("--quiet", is_flag=True, help="No progress lines.")
def train_clip(**kwargs: Any) -> None:
    """Fine-tune a CLIP model with symmetric InfoNCE on a dataset's training pairs
    (torchrun for several GPUs; under torchrun, --device auto or cuda is each rank's GPU).

    Writes last.pt (resumable) and best.pt (best validation P@1) into --out; running the
    same command again resumes from last.pt.
    """
    from abduct_clip._train import TrainConfig, train_from_data_dir

    settings = settings_from(kwargs)
    train_from_data_dir(TrainConfig(**kwargs, seed=settings.seed, batch_size=settings.batch_size,
                                    device=settings.device))
