"""abduct plugin: the ``clip`` scorer, ``abduct train clip`` and ``abduct demo``.

No torch or open_clip import here: listing plugins stays fast.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click

from abduct import hookimpl
from abduct.plugins import Registration


@hookimpl
def register_scorers() -> Iterator[Registration]:
    yield Registration(
        "clip",
        "CLIP dual encoder (open_clip) seeing the region drawn on the image: clip:ViT-B-16@openai, clip:/ckpt.pt, clip:tiny",
        "abduct_clip._scorer:make_clip",
    )


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.cli import subgroup

    train = subgroup(cli, "train", "Fine-tune models.")
    train.add_command(train_clip)
    cli.add_command(demo)


@click.command("clip")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Sherlock data directory.")
@click.option("--model", "model", default="clip:tiny", show_default=True, help="Starting model spec (clip:...).")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Checkpoint directory.")
@click.option("--steps", type=click.IntRange(min=1), default=3000, show_default=True)
@click.option("--batch-size", type=click.IntRange(min=2), default=64, show_default=True, help="Global batch size.")
@click.option("--lr", type=float, default=1e-5, show_default=True)
@click.option("--weight-decay", type=float, default=0.2, show_default=True)
@click.option("--warmup", type=click.IntRange(min=0), default=500, show_default=True, help="Linear warm-up steps.")
@click.option("--multitask", is_flag=True, help="Train on clues and inferences (prefixes 'clue: '/'inference: ').")
@click.option("--no-augment", is_flag=True, help="Turn off the random crop/flip/colour augmentation.")
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=300, show_default=True)
@click.option("--val-limit", type=click.IntRange(min=1), default=None, help="Validate on the first N instances.")
@click.option("--log-every", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--workers", type=click.IntRange(min=0), default=None, help="Data-loader workers (default min(2, cpus)).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--device", default=None, help="cpu or cuda (default: cuda when available; per rank under torchrun).")
@click.option("--quiet", is_flag=True, help="No progress lines.")
def train_clip(**kwargs: object) -> None:
    """Fine-tune a CLIP model on Sherlock with symmetric InfoNCE (torchrun for several GPUs).

    Writes last.pt (resumable) and best.pt (best validation P@1) into --out; running the
    same command again resumes from last.pt.
    """
    from abduct_clip._train import TrainConfig, train_from_data_dir

    train_from_data_dir(TrainConfig(**kwargs))  # type: ignore[arg-type]


@click.command("demo")
@click.option("--work", "work_dir", type=click.Path(path_type=Path), default=None,
              help="Keep the corpus, checkpoints and results here (default: a temporary directory).")
@click.option("--images", type=click.IntRange(min=8), default=None, help="Synthetic corpus size in images.")
@click.option("--steps", type=click.IntRange(min=1), default=None, help="Fine-tuning steps.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the metrics of the three models as JSON.")
@click.option("--quiet", is_flag=True, help="No progress lines.")
def demo(work_dir: Path | None, images: int | None, steps: int | None, seed: int, as_json: bool, quiet: bool) -> None:
    """Synthesise a Sherlock corpus, fine-tune clip:tiny on the CPU and compare random,
    untrained and fine-tuned models on the three Sherlock tasks."""
    from abduct_clip._demo import run_demo

    run_demo(work_dir=work_dir, images=images, steps=steps, seed=seed, as_json=as_json, quiet=quiet)
