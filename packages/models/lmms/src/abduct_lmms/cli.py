"""``abduct export lmms-eval`` (added by the plugin's ``register_commands``)."""

from __future__ import annotations

from pathlib import Path

import click

from abduct.kit import SEED


@click.command("lmms-eval")
@click.argument("tasks", nargs=-1, required=True)
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Folder for the task folders.")
@click.option("--split", default=None, help="Split (default: each task's own).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="The task's --limit, as in abduct eval.")
@click.option("--seed", type=SEED, default=0, show_default=True)
def export_lmms_eval(tasks: tuple[str, ...], data_dir: Path, out_dir: Path, split: str | None, limit: int | None,
                     seed: int) -> None:
    """Write an lmms-eval task folder for each TASK (run it with lmms-eval --include_path OUT
    --tasks abduct_<task>); print the names written."""
    from abduct.kit import require_dir
    from abduct_lmms.export import export_task
    from abduct_lmms.replay import Source

    data_dir = require_dir(data_dir, "--data").resolve()  # the documents name images by absolute path
    for task in tasks:
        click.echo(export_task(Source(task, data_dir, split, limit, seed), out_dir))
