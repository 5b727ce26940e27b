"""``abduct var ...``: check, validate-submission, synth (``abduct train var`` is in ``_train_cli``).

Only click here: the heavy modules load when a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from abduct.kit import POSITIVE, SEED, settings_from, settings_options


@click.command("check")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--videos", type=click.Path(path_type=Path), default=None, help="Video directory (default DATA/videos).")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check(ctx: click.Context, data_dir: Path, videos: Path | None, as_json: bool) -> None:
    """List schema problems and missing videos (<videos>/<video_id>.mp4|mkv|webm); exit 1 if any."""
    from abduct.kit import report_problems
    from abduct_var.check import check_data

    report_problems(ctx, check_data(data_dir, videos), data_dir, as_json)


@click.command("validate-submission")
@click.option("--predictions", required=True, type=click.Path(path_type=Path), help="Submission JSON.")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--split", default="val", show_default=True)
@click.option("--events", type=click.Choice(["all", "hypothesis", "premise"]), default="all", show_default=True,
              help="Which events the submission should hold (var, var-explanation, var-premise).")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def validate_submission(ctx: click.Context, predictions: Path, data_dir: Path, split: str, events: str,
                        as_json: bool) -> None:
    """Check a submission against the annotations: missing or unknown examples, missing, extra
    or reordered events, wrong is_hypothesis; exit 1 if any (2 for an unreadable file)."""
    from abduct.kit import report_problems
    from abduct_var.loader import load_split
    from abduct_var.submission import load_submission, validate_against

    entries = load_submission(predictions)
    examples, _ = load_split(data_dir, split)
    report_problems(ctx, validate_against(entries, examples, which=events), predictions, as_json)


@click.command("synth")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--examples", type=click.IntRange(min=4), default=None,
              help="Training examples (val and test get a quarter each; default 96).")
@click.option("--seed", type=SEED, default=0, show_default=True)
def synth(out_dir: Path, examples: int | None, seed: int) -> None:
    """Write a synthetic VAR corpus: short mp4 videos of moving coloured shapes and
    var_{train,val,test}_v1.0.json whose hypotheses follow from their premises."""
    from abduct_var.synth import DEFAULT_EXAMPLES, synthesize

    summary = synthesize(out_dir, examples or DEFAULT_EXAMPLES, seed)
    click.echo(f"wrote a synthetic VAR corpus to {out_dir}: {summary}")


@click.command("var")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--videos", type=click.Path(path_type=Path), default=None, help="Video directory (default DATA/videos).")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Checkpoint directory.")
@click.option("--encoder", default="clip:tiny", show_default=True, help="Frame encoder (a clip model spec).")
@click.option("--steps", type=click.IntRange(min=1), default=2000, show_default=True)
@settings_options(device="auto", batch_size=32, batch_help="Global batch size.")
@click.option("--lr", type=POSITIVE, default=3e-3, show_default=True)
@click.option("--width", type=click.IntRange(min=8), default=64, show_default=True, help="Model width.")
@click.option("--frames", type=click.IntRange(min=1), default=4, show_default=True, help="Frames per event.")
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=200, show_default=True)
@click.option("--log-every", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--quiet", is_flag=True, help="No progress lines.")
def train_var(**kwargs: Any) -> None:
    """Train the small VAR generator (frozen CLIP frame embeddings -> event-chain transformer
    with the hypothesis masked -> word decoder) on the training split; torchrun-ready.

    Writes last.pt (resumable: the same command again continues from it) into --out; evaluate
    with --model var-gen:OUT/last.pt."""
    from abduct_var._train import TrainConfig, train

    settings = settings_from(kwargs)
    train(TrainConfig(**kwargs, seed=settings.seed, batch_size=settings.batch_size, device=settings.device))


COMMANDS = (check, validate_submission, synth)
