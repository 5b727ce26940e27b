"""Entry module: registrations only; the commands live in ``abduct_cosim.cli``."""

from __future__ import annotations

from collections.abc import Iterator

import click

from abduct import PublishedRow, Registration, hookimpl
from abduct.kit import read_published


@hookimpl
def register_datasets() -> Iterator[Registration]:
    yield Registration("cosim", "CoSIm (NAACL 2022): counterfactual scene imagination, 4-way choice",
                       "abduct_cosim.dataset:make_dataset")


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("cosim", "CoSIm: accuracy of the argmax over 4 new responses (by type, change sentences, yes/no)",
                       "abduct_cosim.tasks:make_cosim")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_cosim.cli import COMMANDS

    group = subgroup(cli, "cosim", "CoSIm: check data, synthesise a corpus.")
    for command in COMMANDS:
        group.add_command(command)


@hookimpl
def register_published() -> list[PublishedRow]:
    return read_published("abduct_cosim")
