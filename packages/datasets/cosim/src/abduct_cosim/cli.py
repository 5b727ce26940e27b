"""``abduct cosim ...``: check, synth (added by the plugin's ``register_commands``)."""

from __future__ import annotations

from pathlib import Path

import click

from abduct.kit import SEED


@click.command("check")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--image-root", type=click.Path(path_type=Path), default=None,
              help="Folder holding <folder>/<img_fn> (default DIR/images).")
@click.option("--no-images", is_flag=True, help="Check the annotation files only.")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check(ctx: click.Context, data_dir: Path, image_root: Path | None, no_images: bool, as_json: bool) -> None:
    """List schema problems and missing or unreadable images; exit 1 if there are any."""
    from abduct.kit import report_problems
    from abduct_cosim.check import check_data

    problems = check_data(data_dir, image_root, images=not no_images)
    report_problems(ctx, problems, data_dir, as_json)


@click.command("synth")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--train", type=click.IntRange(min=1), default=None, help="Training records (default 90).")
@click.option("--val", type=click.IntRange(min=1), default=None, help="Validation records (default 60).")
@click.option("--seed", type=SEED, default=0, show_default=True)
def synth(out_dir: Path, train: int | None, val: int | None, seed: int) -> None:
    """Write a synthetic corpus in the exact release schema (train.json, val.json, images)."""
    from abduct_cosim.synth import DEFAULT_TRAIN, DEFAULT_VAL, synthesize

    synthesize(out_dir, train or DEFAULT_TRAIN, val or DEFAULT_VAL, seed)
    click.echo(f"wrote a synthetic CoSIm corpus ({train or DEFAULT_TRAIN} train, {val or DEFAULT_VAL} val) to {out_dir}")


COMMANDS = (check, synth)
