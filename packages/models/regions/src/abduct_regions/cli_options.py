"""The options of ``abduct train lxmert`` and ``abduct train uniter``, declared once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from abduct.kit import NON_NEGATIVE, POSITIVE, settings_options

F = TypeVar("F", bound=Callable[..., Any])


def train_options(*, model: str, tasks: tuple[str, ...]) -> Callable[[F], F]:
    def decorate(command: F) -> F:
        options = [
            click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory."),
            click.option("--task", type=click.Choice(tasks), default=tasks[0], show_default=True,
                         help="sherlock: triplet loss on (image, region, clue, inference) pairs; "
                              "cosim: 4-way cross-entropy over the choices."),
            click.option("--dataset", default=None,
                         help="Registered dataset to read (default: the task's; any pair dataset for sherlock)."),
            click.option("--model", default=model, show_default=True, help="Starting model spec."),
            click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Checkpoint directory."),
            click.option("--steps", type=click.IntRange(min=1), default=1000, show_default=True),
            click.option("--lr", type=POSITIVE, default=5e-5, show_default=True),
            click.option("--weight-decay", type=NON_NEGATIVE, default=0.01, show_default=True),
            click.option("--warmup", type=click.IntRange(min=0), default=100, show_default=True,
                         help="Linear warm-up steps."),
            click.option("--margin", type=NON_NEGATIVE, default=0.2, show_default=True, help="Triplet-loss margin."),
            click.option("--checkpoint-every", type=click.IntRange(min=1), default=200, show_default=True),
            click.option("--val-limit", type=click.IntRange(min=2), default=64, show_default=True,
                         help="Validate on the first N validation examples (a cross-encoder scores N x N pairs per chunk)."),
            click.option("--log-every", type=click.IntRange(min=1), default=10, show_default=True),
            click.option("--quiet", is_flag=True, help="No progress lines."),
        ]
        for option in reversed(options):
            command = option(command)
        return settings_options(device="auto", batch_size=16, batch_help="Global batch size (positives).")(command)

    return decorate


def train_command(name: str, family_module: str, doc: str) -> click.Command:
    """``abduct train NAME`` for a cross-encoder family: the command is the same for every
    family but for its name, starting model and help; ``family_module`` (holding ``FAMILY``)
    and torch load only when the command runs."""

    def command(**kwargs: Any) -> None:
        import importlib

        from abduct_regions.training import train_from_options

        train_from_options(importlib.import_module(family_module).FAMILY, kwargs)

    command.__doc__ = doc
    return click.command(name)(train_options(model=f"{name}:tiny", tasks=("sherlock", "cosim"))(command))
