"""Entry module: registrations only. Nothing heavy is imported here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click

from abduct import Registration, hookimpl


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("example-colors", "Which colour dominates the image? (4-way choice)", "abduct_plugin_example.task:ColorTask")


@hookimpl
def register_scorers() -> Iterator[Registration]:
    yield Registration("example-color", "Mean-colour dual encoder (solves example-colors)", "abduct_plugin_example.scorer:make_scorer")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.cli import subgroup

    group = subgroup(cli, "example", "The example plugin's commands.")

    @group.command("make-data")
    @click.option("--out", type=click.Path(path_type=Path), required=True)
    @click.option("--items", type=click.IntRange(min=1), default=40, show_default=True)
    @click.option("--seed", type=int, default=0, show_default=True)
    def make_data(out: Path, items: int, seed: int) -> None:
        """Write an example-colors dataset (images, questions.json, answers.json)."""
        from abduct_plugin_example.data import write_dataset

        write_dataset(out, items=items, seed=seed)
        click.echo(f"wrote {items} questions to {out}")
