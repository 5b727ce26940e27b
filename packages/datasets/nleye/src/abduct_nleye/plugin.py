"""Entry module: registrations only; the commands live in ``abduct_nleye.cli``."""

from __future__ import annotations

from collections.abc import Iterator

import click

from abduct import PublishedRow, Registration, hookimpl
from abduct.kit import read_published


@hookimpl
def register_datasets() -> Iterator[Registration]:
    yield Registration("nleye", "NL-EYE (ICLR 2025): abductive NLI over images, 350 triplets",
                       "abduct_nleye.dataset:make_dataset")


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("nleye-triplet", "NL-EYE triplet: consistency accuracy over both presentation orders",
                       "abduct_nleye.tasks:make_triplet")
    yield Registration("nleye-pairs", "NL-EYE pairs: order-faithful accuracy (gold strictly higher, ties 0)",
                       "abduct_nleye.tasks:make_pairs")
    yield Registration("nleye-explanation", "NL-EYE explanations against the gold one (BERTScore, BEM; "
                       "BLEU/ROUGE-L/CIDEr without weights)", "abduct_nleye.explanation:make_explanation")


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration("dumb-pixel", "NL-EYE baseline: the hypothesis whose upper-left pixel is brighter",
                       "abduct_nleye.dumbpixel:make_dumb_pixel")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_nleye.cli import COMMANDS

    group = subgroup(cli, "nleye", "NL-EYE: check data, synthesise a corpus.")
    for command in COMMANDS:
        group.add_command(command)


@hookimpl
def register_published() -> list[PublishedRow]:
    return read_published("abduct_nleye")
