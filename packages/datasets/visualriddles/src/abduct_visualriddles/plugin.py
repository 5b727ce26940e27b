"""Entry module: registrations only; the commands live in ``abduct_visualriddles.cli``."""

from __future__ import annotations

from collections.abc import Iterator

import click

from abduct import PublishedRow, Registration, hookimpl
from abduct.kit import read_published


@hookimpl
def register_datasets() -> Iterator[Registration]:
    yield Registration("visualriddles", "Visual Riddles (NeurIPS 2024 D&B): 400 synthetic images with a riddle, "
                       "answer, hint and attribution (the Hub imagefolder)", "abduct_visualriddles.dataset:make_dataset")


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("visualriddles-mcq", "Visual Riddles multiple choice: accuracy, % cannot determine, accuracy "
                       "without it (setup=plain|hint|attribution)", "abduct_visualriddles.mcq:make_mcq")
    yield Registration("visualriddles-open", "Visual Riddles open-ended answers judged by --judge, reference-based or "
                       "reference-free (setup=plain|hint|attribution)", "abduct_visualriddles.open:make_open")
    yield Registration("visualriddles-judge", "Visual Riddles auto-evaluation: the model judges released answers; "
                       "accuracy and Cohen's kappa against the human labels", "abduct_visualriddles.judge:make_judge")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_visualriddles.cli import COMMANDS

    group = subgroup(cli, "visualriddles", "Visual Riddles: check data, synthesise a release.")
    for command in COMMANDS:
        group.add_command(command)


@hookimpl(optionalhook=True)  # declared by abduct-demo, which may not be installed
def register_demos() -> Iterator[Registration]:
    yield Registration("visualriddles", "Visual Riddles on a synthetic release: random and text-only on multiple "
                       "choice and on the judge task", "abduct_visualriddles._demo:visualriddles_section")


@hookimpl
def register_published() -> list[PublishedRow]:
    return read_published("abduct_visualriddles")
