"""The command this package adds: ``abduct train t5``. Only click here: torch and
transformers load when the command runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from abduct.kit import POSITIVE, settings_from, settings_options


@click.command("t5")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--dataset", default="sherlock", show_default=True,
              help="Registered dataset giving (context, text) pairs: the clue and the inference (see `abduct datasets`).")
@click.option("--model", "model", default="t5:tiny", show_default=True,
              help="Starting model: t5:tiny, t5:DIR (a Hugging Face directory) or t5:NAME (a hub name).")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Checkpoint directory.")
@click.option("--epochs", type=POSITIVE, default=5.0, show_default=True)
@click.option("--steps", type=click.IntRange(min=1), default=None, help="Train this many steps (overrides --epochs).")
@settings_options(device="auto", batch_size=32, batch_help="Global batch size.")
@click.option("--lr", type=POSITIVE, default=1e-3, show_default=True, help="Adafactor learning rate (constant).")
@click.option("--template", default="clue: {context}", show_default=True, help="Prompt; {context} is the clue.")
@click.option("--eval-every", type=click.IntRange(min=1), default=None,
              help="Steps between validations and checkpoints (default: once an epoch).")
@click.option("--val-limit", type=click.IntRange(min=1), default=None, help="Validate on the first N pairs.")
@click.option("--log-every", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--quiet", is_flag=True, help="No progress bar or log lines.")
def train_t5(**kwargs: Any) -> None:
    """Fine-tune T5 on P(text | context) — the Sherlock paper's clue -> inference oracle:
    Adafactor, lr 1e-3, batch 32, 5 epochs, best validation loss kept (torchrun for several GPUs).

    Writes best/ and last/ (Hugging Face directories, safetensors; `t5:OUT/best` loads one)
    into --out; running the same command again resumes from last/.
    """
    from abduct_t5._train import TrainConfig, train_from_data_dir

    settings = settings_from(kwargs)
    train_from_data_dir(TrainConfig(**kwargs, seed=settings.seed, batch_size=settings.batch_size,
                                    device=settings.device))
