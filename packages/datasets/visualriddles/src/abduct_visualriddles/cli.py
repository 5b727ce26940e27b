"""``abduct visualriddles ...``: check, synth (added by the plugin's ``register_commands``)."""

from __future__ import annotations

from pathlib import Path

import click

from abduct.kit import SEED


@click.command("check")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check(ctx: click.Context, data_dir: Path, as_json: bool) -> None:
    """List layout problems, what each task cannot read, and missing or unreadable images; exit 1 if any."""
    from abduct.kit import report_problems
    from abduct_visualriddles.check import check_data

    report_problems(ctx, check_data(data_dir), data_dir, as_json)


@click.command("synth")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--riddles", type=click.IntRange(min=1), default=None, help="Riddles (default 40).")
@click.option("--seed", type=SEED, default=0, show_default=True)
def synth(out_dir: Path, riddles: int | None, seed: int) -> None:
    """Write a synthetic release (test/<sha256>.jpg and test/metadata.csv, as the Hub's imagefolder)."""
    from abduct_visualriddles.synth import DEFAULT_RIDDLES, synthesize

    synthesize(out_dir, riddles or DEFAULT_RIDDLES, seed)
    click.echo(f"wrote a synthetic Visual Riddles release ({riddles or DEFAULT_RIDDLES} riddles) to {out_dir}")


COMMANDS = (check, synth)
