"""``abduct blackswan ...``: check, synth, submit, validate.

Only click here: the modules that read and write load when a command runs. Anything the user
can fix is one line and exit code 2 (``AbductError``), except what ``check`` finds (exit 1, as
every ``check`` command).
"""

from __future__ import annotations

from pathlib import Path

import click

from abduct.kit import SEED


@click.command("check")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path),
              help="Folder holding MCQ/, YN/ and Gen/ (or the Hugging Face hub cache).")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check(ctx: click.Context, data_dir: Path, as_json: bool) -> None:
    """List the problems of the three repos' question files (both splits) and the clips they
    name; exit 1 if any."""
    from abduct.kit import report_problems, require_dir
    from abduct_blackswan.dataset import check_all

    require_dir(data_dir, "data directory")
    report_problems(ctx, check_all(data_dir), data_dir, as_json)


@click.command("synth")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--videos", type=click.IntRange(min=3), default=None, help="Videos per split (default 16).")
@click.option("--seed", type=SEED, default=0, show_default=True)
def synth(out_dir: Path, videos: int | None, seed: int) -> None:
    """Write a synthetic corpus in the released layout (MCQ/, YN/, Gen/: short mp4 clips of a
    ball and a splash of colour, validation and test files)."""
    from abduct_blackswan.synth import DEFAULT_VIDEOS, synthesize

    summary = synthesize(out_dir, videos or DEFAULT_VIDEOS, seed)
    click.echo(f"wrote a synthetic BlackSwan corpus to {out_dir}: {summary}")


@click.command("submit")
@click.argument("source", metavar="RUN_OR_PREDICTIONS", type=click.Path(path_type=Path))
@click.option("--out", "out_file", required=True, type=click.Path(path_type=Path), help="The JSON file to write.")
def submit(source: Path, out_file: Path) -> None:
    """Write the challenge's submission file from a blackswan-mcq run on the test split (its
    folder, or its predictions.jsonl): {question id: option index, -1 unanswered}."""
    import json

    from abduct.kit import atomic_write_text, require_new_or_regular
    from abduct_blackswan.challenge import run_answers

    answers = run_answers(source)
    require_new_or_regular(out_file, "--out")
    atomic_write_text(out_file, json.dumps(answers, indent=1) + "\n")
    unanswered = sum(v == -1 for v in answers.values())
    click.echo(f"wrote {out_file}: {len(answers)} answers ({unanswered} unanswered, -1); "
               "check it with abduct blackswan validate")


@click.command("validate")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Folder holding MCQ/.")
@click.option("--split", type=click.Choice(["test", "validation"]), default="test", show_default=True)
def validate(file: Path, data_dir: Path, split: str) -> None:
    """Check a submission file against the split's MCQ questions: missing, extra, out-of-range and
    non-integer answers, one line for each kind found, then one error line; exit 2 if any."""
    from abduct import AbductError
    from abduct.kit import read_json
    from abduct_blackswan.challenge import problems, require_run
    from abduct_blackswan.dataset import BlackSwanRepo
    from abduct_blackswan.loader import load_mcq

    require_run(file, split)  # the two splits' ids may coincide: a run's challenge.json says its split
    ids = [q.id for q in BlackSwanRepo("MCQ", load_mcq).load(data_dir, split)]
    found = problems(read_json(file, "BlackSwan submission"), ids)
    for problem in found:
        click.echo(f"{file}: {problem}")
    if found:
        raise AbductError(f"{file} is not a valid submission for the {len(ids)} {split} questions "
                          f"({len(found)} kind{'s' if len(found) > 1 else ''} of problem, listed above)")
    click.echo(f"{file}: valid, {len(ids)} answers for the {len(ids)} {split} questions")


COMMANDS = (check, synth, submit, validate)
