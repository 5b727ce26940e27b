"""``abduct nycc ...``: check, synth (added by the plugin's ``register_commands``)."""

from __future__ import annotations

from pathlib import Path

import click

from abduct.kit import SEED


@click.command("check")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="The repo copy or hub cache.")
@click.option("--configs", type=click.Choice(["description", "pixels"]), default="description", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check(ctx: click.Context, data_dir: Path, configs: str, as_json: bool) -> None:
    """List, per task and fold, test splits that do not load; exit 1 if there are any."""
    from abduct.kit import report_problems
    from abduct_nycc.dataset import NyccDataset

    problems = [f"nycc-{task} {p}" for task in ("matching", "ranking", "explanation")
                for p in NyccDataset(task, configs).check(data_dir)]  # type: ignore[arg-type]
    report_problems(ctx, problems, data_dir, as_json)


@click.command("synth")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--per-fold", type=click.IntRange(min=1), default=None, help="Test instances per fold (default 8).")
@click.option("--seed", type=SEED, default=0, show_default=True)
def synth(out_dir: Path, per_fold: int | None, seed: int) -> None:
    """Write a tiny fake release in the repo's layout (30 configs' test splits, a leaderboard set)."""
    from abduct_nycc.synth import DEFAULT_PER_FOLD, synthesize

    synthesize(out_dir, per_fold or DEFAULT_PER_FOLD, seed)
    click.echo(f"wrote a synthetic NYCC release ({per_fold or DEFAULT_PER_FOLD} test instances per fold) to {out_dir}")


COMMANDS = (check, synth)
