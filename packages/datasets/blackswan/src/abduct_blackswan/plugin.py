"""Entry module: registrations only; commands live in ``abduct_blackswan.cli``, the rest loads on use."""

from __future__ import annotations

from collections.abc import Iterator

import click

from abduct import PublishedRow, Registration, hookimpl
from abduct.kit import read_published


@hookimpl
def register_datasets() -> Iterator[Registration]:
    yield Registration("blackswan-mcq", "BlackSwan MCQ repo (UBC-ViL/BlackSwanSuite-MCQ): Detective and Reporter, "
                       "three options", "abduct_blackswan.dataset:make_mcq_dataset")
    yield Registration("blackswan-yn", "BlackSwan Y/N repo (UBC-ViL/BlackSwanSuite-YN): is the hypothesis still "
                       "possible / valid?", "abduct_blackswan.dataset:make_yn_dataset")
    yield Registration("blackswan-gen", "BlackSwan Gen repo (UBC-ViL/BlackSwanSuite-Gen): Forecaster, Detective, "
                       "Reporter with reference answers", "abduct_blackswan.dataset:make_gen_dataset")


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("blackswan-mcq", "BlackSwan MCQ: pooled, Detective and Reporter accuracy (the challenge's "
                       "metric and submission file)", "abduct_blackswan.tasks:make_mcq")
    yield Registration("blackswan-yn", "BlackSwan Y/N: pooled, Detective and Reporter accuracy",
                       "abduct_blackswan.tasks:make_yn")
    yield Registration("blackswan-gen", "BlackSwan Gen: Forecaster, Detective and Reporter explanations "
                       "(BERTScore-Hungarian, LLM-match with --judge)", "abduct_blackswan.gen_task:make_gen_task")


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration("blackswan-colour", "A probe of the pipeline: scores a text by the colour it names in the "
                       "frames shown (beats chance on the synthetic corpus only)", "abduct_blackswan.probe:make_colour_probe")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_blackswan.cli import COMMANDS

    group = subgroup(cli, "blackswan", "BlackSwan: check data, synthesise a corpus, write and validate submissions.")
    for command in COMMANDS:
        group.add_command(command)


@hookimpl(optionalhook=True)  # declared by abduct-demo, which may not be installed
def register_demos() -> Iterator[Registration]:
    yield Registration("blackswan", "BlackSwan on a synthetic video corpus: random, text-only and the colour probe",
                       "abduct_blackswan._demo:blackswan_section")


@hookimpl
def register_published() -> list[PublishedRow]:
    return read_published("abduct_blackswan")
