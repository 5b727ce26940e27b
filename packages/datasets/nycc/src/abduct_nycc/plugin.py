"""Entry module: registrations only; the commands live in ``abduct_nycc.cli``."""

from __future__ import annotations

from collections.abc import Iterator

import click

from abduct import PublishedRow, Registration, hookimpl
from abduct.kit import read_published


@hookimpl
def register_datasets() -> Iterator[Registration]:
    for task in ("matching", "ranking", "explanation"):
        more = ", leaderboard=DIR" if task != "explanation" else ""
        yield Registration(f"nycc-{task}", f"New Yorker Caption Contest (ACL 2023) {task} configs, five folds "
                           f"(configs=description|pixels{more})", f"abduct_nycc.dataset:make_{task}")


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("nycc-matching", "NYCC matching: the caption written for the cartoon among five "
                       "(fold=all|0..4, mean over folds)", "abduct_nycc.tasks:make_matching")
    yield Registration("nycc-ranking", "NYCC quality ranking: the finalist over an okay caption, overall and by "
                       "finalist source", "abduct_nycc.tasks:make_ranking")
    yield Registration("nycc-explanation", "NYCC explanation: sacreBLEU and ROUGE-L as eval_crossval.py; a judge's "
                       "preference against the reference", "abduct_nycc.tasks:make_explanation")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_nycc.cli import COMMANDS

    group = subgroup(cli, "nycc", "New Yorker Caption Contest: check data, synthesise a release.")
    for command in COMMANDS:
        group.add_command(command)


@hookimpl(optionalhook=True)  # declared by abduct-demo, which may not be installed
def register_demos() -> Iterator[Registration]:
    yield Registration("nycc", "New Yorker Caption Contest on a fake release: random and constant over five folds",
                       "abduct_nycc._demo:nycc_section")


@hookimpl
def register_published() -> list[PublishedRow]:
    return read_published("abduct_nycc")
