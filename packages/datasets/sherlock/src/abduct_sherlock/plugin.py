"""Entry module: registrations only. Nothing heavy is imported here; the commands live in
``abduct_sherlock.cli``."""

from __future__ import annotations

from collections.abc import Iterator

import click

from abduct import PublishedRow, Registration, hookimpl
from abduct.kit import read_published


@hookimpl
def register_datasets() -> Iterator[Registration]:
    yield Registration("sherlock", "Sherlock (ECCV 2022): 363K region-grounded (clue, inference) pairs",
                       "abduct_sherlock.dataset:make_dataset")
    yield Registration("sherlock-localization", "Sherlock's localization images: val_localization/, or the "
                       "annotations + proposals (source=auto|leaderboard|annotations)",
                       "abduct_sherlock.dataset:make_localization_dataset")
    yield Registration("sherlock-comparison", "Sherlock's comparison sources (val_comparison/) with their clues",
                       "abduct_sherlock.dataset:make_comparison_dataset")
    yield Registration("sherlock-generation", "Sherlock's validation instances, the training inferences as the pool",
                       "abduct_sherlock.dataset:make_generation_dataset")


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("sherlock-retrieval", "Sherlock retrieval: im->txt / txt->im mean rank and P@1 per ~1K chunk",
                       "abduct_sherlock.tasks:make_retrieval")
    yield Registration("sherlock-localization", "Sherlock localization: GT boxes (lapjv) and auto boxes (IoU > 0.5)",
                       "abduct_sherlock.tasks:make_localization")
    yield Registration("sherlock-comparison", "Sherlock comparison: pairwise accuracy vs two Likert annotators",
                       "abduct_sherlock.tasks:make_comparison")
    yield Registration("sherlock-generation",
                       "Sherlock generation (abduct's own): the inference from (image, region, clue); "
                       "BLEU-4, CIDEr-D, ROUGE-L, METEOR", "abduct_sherlock.tasks:make_generation")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_sherlock.cli import COMMANDS

    group = subgroup(cli, "sherlock", "Sherlock: check data, synthesise a corpus, leaderboard submissions.")
    for command in COMMANDS:
        group.add_command(command)


@hookimpl
def register_published() -> list[PublishedRow]:
    return read_published("abduct_sherlock")
