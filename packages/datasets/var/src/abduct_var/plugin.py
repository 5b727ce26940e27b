"""Entry module: registrations only; commands live in ``abduct_var.cli``, models load on use."""

from __future__ import annotations

from collections.abc import Iterator

import click

from abduct import PublishedRow, Registration, hookimpl
from abduct.kit import read_published


@hookimpl
def register_datasets() -> Iterator[Registration]:
    yield Registration("var", "VAR (CVPR 2022): event chains from videos, one masked hypothesis event",
                       "abduct_var.dataset:make_dataset")


@hookimpl
def register_tasks() -> Iterator[Registration]:
    yield Registration("var", "VAR: premise and hypothesis events, the eval kit's full submission and scoring",
                       "abduct_var.tasks:make_var")
    yield Registration("var-explanation", "VAR: explain the masked hypothesis event from the premise events",
                       "abduct_var.tasks:make_explanation")
    yield Registration("var-premise", "VAR: describe each premise event", "abduct_var.tasks:make_premise")


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration("var-retrieval", "VAR baseline: the nearest training sentence by CLIP frame embedding "
                       "(var-retrieval,data=DIR[,encoder=clip:tiny])", "abduct_var._retrieval:make_retrieval")
    yield Registration("var-gen", "VAR: the small trained generator of `abduct train var` (var-gen:CKPT)",
                       "abduct_var._generator:make_generator")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_var.cli import COMMANDS, train_var

    group = subgroup(cli, "var", "VAR: check data, validate submissions, synthesise a corpus.")
    for command in COMMANDS:
        group.add_command(command)
    subgroup(cli, "train", "Fine-tune models.").add_command(train_var)


@hookimpl(optionalhook=True)  # declared by abduct-demo, which may not be installed
def register_demos() -> Iterator[Registration]:
    yield Registration("var", "VAR on a synthetic video corpus: random, retrieval and the trained generator",
                       "abduct_var._demo:var_section")


@hookimpl
def register_published() -> list[PublishedRow]:
    return read_published("abduct_var")
