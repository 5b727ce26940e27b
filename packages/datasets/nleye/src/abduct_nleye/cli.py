"""``abduct nleye ...``: check, synth (added by the plugin's ``register_commands``)."""

from __future__ import annotations

from pathlib import Path

import click

from abduct.kit import SEED


@click.command("check")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--image-root", type=click.Path(path_type=Path), default=None,
              help="Folder holding <sample_id>/{premise,hypothesis1,hypothesis2}.png (default DIR/images).")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check(ctx: click.Context, data_dir: Path, image_root: Path | None, as_json: bool) -> None:
    """List schema problems and missing or unreadable images; exit 1 if there are any."""
    from abduct.kit import report_problems
    from abduct_nleye.check import check_data

    problems = check_data(data_dir, image_root)
    report_problems(ctx, problems, data_dir, as_json)


@click.command("synth")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--samples", type=click.IntRange(min=1), default=None, help="Triplets (default 36).")
@click.option("--seed", type=SEED, default=0, show_default=True)
def synth(out_dir: Path, samples: int | None, seed: int) -> None:
    """Write a synthetic corpus (test_set.csv and images/<sample_id>/*.png) with a learnable rule."""
    from abduct_nleye.synth import DEFAULT_SAMPLES, synthesize

    synthesize(out_dir, samples or DEFAULT_SAMPLES, seed)
    click.echo(f"wrote a synthetic NL-EYE corpus ({samples or DEFAULT_SAMPLES} triplets) to {out_dir}")


COMMANDS = (check, synth)
