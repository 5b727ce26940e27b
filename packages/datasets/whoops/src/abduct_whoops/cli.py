"""``abduct whoops ...``: check, folds, synth, submit (added by the plugin's ``register_commands``)."""

from __future__ import annotations

from pathlib import Path

import click

from abduct.kit import SEED


@click.command("check")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--normal-images", type=click.Path(path_type=Path), default=None,
              help="The identification release (default: DATA/identification when present).")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check(ctx: click.Context, data_dir: Path, normal_images: Path | None, as_json: bool) -> None:
    """List schema problems and missing or unreadable images (by image id); exit 1 if any."""
    from abduct.kit import report_problems
    from abduct_whoops.check import check_data

    report_problems(ctx, check_data(data_dir, normal_images), data_dir, as_json)


@click.command("folds")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path), help="JSON file to write.")
@click.option("--seed", type=SEED, default=None, help="Fold seed (default 2023, the documented one).")
def folds(data_dir: Path, out: Path, seed: int | None) -> None:
    """Write the 5 cross-validation folds (60/20/20 train/val/test each) to a JSON file."""
    from abduct_whoops.loader import load_release
    from abduct_whoops.splits import FOLD_SEED, make_folds, write_folds

    release = load_release(data_dir)
    made = make_folds([image.image_id for image in release.images], FOLD_SEED if seed is None else seed)
    write_folds(out, made)
    sizes = "/".join(str(len(made.part(0, p))) for p in ("train", "val", "test"))
    click.echo(f"wrote 5 folds (seed {made.seed}; train/val/test {sizes} images in fold 0) to {out}")


@click.command("synth")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--images", type=click.IntRange(min=5), default=None, help="Images (default 40).")
@click.option("--seed", type=SEED, default=0, show_default=True)
def synth(out_dir: Path, images: int | None, seed: int) -> None:
    """Write a synthetic corpus (release schema, images, identification release) with a learnable rule."""
    from abduct_whoops.synth import DEFAULT_IMAGES, synthesize

    synthesize(out_dir, images or DEFAULT_IMAGES, seed)
    click.echo(f"wrote a synthetic WHOOPS! corpus ({images or DEFAULT_IMAGES} images) to {out_dir}")


@click.command("submit")
@click.option("--run", "run_dir", required=True, type=click.Path(path_type=Path), help="A finished abduct eval run.")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path), help="CSV file to write.")
@click.option("--data", "data_dir", type=click.Path(path_type=Path), default=None,
              help="Dataset directory (default: the run's).")
def submit(run_dir: Path, out: Path, data_dir: Path | None) -> None:
    """Write the leaderboard file: the dataset CSV plus a predictions column from RUN."""
    from abduct_whoops.submit import write_submission

    task, rows = write_submission(run_dir, out, data_dir)
    click.echo(f"wrote {rows} rows with {task} predictions to {out}")


COMMANDS = (check, folds, synth, submit)
