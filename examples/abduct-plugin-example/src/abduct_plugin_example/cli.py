"""The plugin's commands: ``abduct example make-data``. ``plugin.register_commands`` adds them."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("make-data")
@click.option("--out", type=click.Path(path_type=Path), required=True)
@click.option("--items", type=click.IntRange(min=1), default=40, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def make_data(out: Path, items: int, seed: int) -> None:
    """Write an example dataset (images, questions.json, answers.json, colors.json)."""
    from abduct_plugin_example.data import write_dataset

    write_dataset(out, items=items, seed=seed)
    click.echo(f"wrote {items} questions to {out}")
