"""``abduct demo`` (added by the plugin's ``register_commands``). The command's body imports the
runner on use."""

from __future__ import annotations

from pathlib import Path

import click

from abduct import AbductError
from abduct.kit import SEED, emit_json


@click.command("demo")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="Keep the corpora, checkpoints and every run's outputs here (default: a temporary directory, "
                   "deleted at the end).")
@click.option("--only", multiple=True, metavar="SECTION", help="Run only this section (repeatable; see `abduct demos`).")
@click.option("--images", type=click.IntRange(min=8), default=None, help="Synthetic Sherlock corpus size in images.")
@click.option("--steps", type=click.IntRange(min=1), default=None, help="Training steps (each section caps its own).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Sections run at once, each in its own process on one torch thread: the digits do not change "
                   "(default: 2 on 2 or more cores, else 1).")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def demo_cmd(out_dir: Path | None, only: tuple[str, ...], images: int | None, steps: int | None, jobs: int | None,
             seed: int, quiet: bool, as_json: bool) -> None:
    """Synthesise corpora, train tiny models on the CPU and compare them with the baselines:
    one table per installed section (see `abduct demos`), printed as each finishes, in a few minutes."""
    from abduct_demo.runner import DemoTable, default_jobs, run_demo, write_overview

    if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
        raise AbductError(f"--out is not a directory: {out_dir}")
    shown: list[str] = []

    def show(name: str, table: DemoTable) -> None:  # each table as its section finishes
        click.echo(("\n" if shown else "") + table.format())
        shown.append(name)

    tables = run_demo(out_dir=out_dir, seed=seed, quiet=quiet, steps=steps, images=images, only=only,
                      jobs=jobs or default_jobs(), on_table=None if as_json else show)
    if as_json:
        emit_json({name: table.rows for name, table in tables.items()})
    if out_dir is not None:
        overview = write_overview(out_dir)
        click.echo(f"corpora, checkpoints and runs kept in {out_dir}"
                   + (f"; every run side by side: {overview}" if overview is not None else ""), err=True)
