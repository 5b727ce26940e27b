"""``abduct sherlock ...``: check, synth, submit, validate-submission (added by the plugin's
``register_commands``). Command bodies import their work lazily."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from abduct.kit import SEED, settings_from, settings_options


@click.command("check")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--vg-root", type=click.Path(path_type=Path), default=None, help="Visual Genome images (default DIR/images/vg).")
@click.option("--vcr-root", type=click.Path(path_type=Path), default=None, help="VCR images (default DIR/images/vcr).")
@click.option("--no-images", is_flag=True, help="Check the annotation files only.")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check(ctx: click.Context, data_dir: Path, vg_root: Path | None, vcr_root: Path | None, no_images: bool,
          as_json: bool) -> None:
    """List schema problems and missing or unreadable images; exit 1 if there are any."""
    from abduct.kit import report_problems
    from abduct_sherlock.check import check_data

    problems = check_data(data_dir, vg_root, vcr_root, images=not no_images)
    report_problems(ctx, problems, data_dir, as_json)


@click.command("synth")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--images", type=click.IntRange(min=3), default=None, help="Number of images (default 300).")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--chunk-size", type=click.IntRange(min=2), default=None,
              help="Target instances per retrieval chunk (default 120): the validation images split into the "
                   "nearest whole number of balanced chunks (the default corpus: 2 chunks of 145 and 147).")
def synth(out_dir: Path, images: int | None, seed: int, chunk_size: int | None) -> None:
    """Write a small synthetic corpus in the exact release schema (images included)."""
    from abduct_sherlock.synth import CHUNK_INSTANCES, DEFAULT_IMAGES, synthesize

    synthesize(out_dir, images=images or DEFAULT_IMAGES, seed=seed, chunk_instances=chunk_size or CHUNK_INSTANCES)
    click.echo(f"wrote a synthetic Sherlock corpus ({images or DEFAULT_IMAGES} images) to {out_dir}")


@click.command("submit")
@click.option("--model", "model_spec", required=True, help="Model spec: name[:argument][@tag][,key=value...].")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path),
              help="Directory holding test_{retrieval,localization,comparison}_public/.")
@click.option("--out", "out_path", required=True, type=click.Path(path_type=Path),
              help="Output zip (test_set_predictions.zip) or a directory to put it in.")
@click.option("--tasks", default="comparison,localization,retrieval", show_default=True,
              help="Comma-separated tasks to predict (comparison is required by the leaderboard).")
@settings_options()
@click.option("--quiet", is_flag=True, help="No progress bars.")
def submit(model_spec: str, data_dir: Path, out_path: Path, tasks: str, quiet: bool, **shared: Any) -> None:
    """Score the public test instance files with MODEL and write test_set_predictions.zip."""
    from abduct_sherlock.submission import write_submission

    written = write_submission(model_spec, data_dir, out_path, tasks=tuple(t.strip() for t in tasks.split(",") if t.strip()),
                               settings=settings_from(shared), quiet=quiet)
    click.echo(f"wrote {written}")


@click.command("validate-submission")
@click.argument("zip_path", type=click.Path(path_type=Path))
@click.option("--data", "data_dir", type=click.Path(path_type=Path), default=None,
              help="Take expected lengths from the test instance files here (default: the official test sizes).")
def validate(zip_path: Path, data_dir: Path | None) -> None:
    """Check a submission zip as the leaderboard validator does."""
    from abduct_sherlock.submission import validate_submission

    for line in validate_submission(zip_path, data_dir):
        click.echo(line)


COMMANDS = (check, synth, submit, validate)
