"""Entry module: registrations only; the commands live in ``abduct_whoops.cli``."""

from __future__ import annotations

from collections.abc import Iterator

import click

from abduct import PublishedRow, Registration, hookimpl
from abduct.kit import read_published


@hookimpl
def register_datasets() -> Iterator[Registration]:
    yield Registration("whoops", "WHOOPS! (ICCV 2023): 500 commonsense-defying images with captions, explanations, "
                       "QA pairs (folds=FILE)", "abduct_whoops.dataset:make_dataset")
    yield Registration("whoops-identification", "WHOOPS! identification release: weird pictures beside normal "
                       "counterparts (normal_images=DIR, counterpart=normal|natural, folds=FILE)",
                       "abduct_whoops.dataset:make_identification_dataset")


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("whoops-captioning", "WHOOPS! captioning: BLEU-4 and CIDEr against the crowd captions",
                       "abduct_whoops.captioning:make_captioning")
    yield Registration("whoops-matching", "WHOOPS! specificity: detailed caption strictly above each "
                       "under-specified one", "abduct_whoops.matching:make_matching")
    yield Registration("whoops-vqa", "WHOOPS! VQA: exact match, then BEM (bem_model=DIR)", "abduct_whoops.vqa:make_vqa")
    yield Registration("whoops-identification", "WHOOPS! identification: weird vs normal images (needs the "
                       "normal-images release)", "abduct_whoops.identification:make_identification")
    yield Registration("whoops-explanation", "WHOOPS! explanation of violation: LLM judge against the designer and "
                       "crowd explanations, BERTScore/BEM proxies", "abduct_whoops.explanation:make_explanation")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_whoops.cli import COMMANDS

    group = subgroup(cli, "whoops", "WHOOPS!: check data, write folds, synthesise a corpus, write the leaderboard file.")
    for command in COMMANDS:
        group.add_command(command)


@hookimpl
def register_published() -> list[PublishedRow]:
    return read_published("abduct_whoops")
