"""abduct plugin: registrations only (the ``t5`` model; ``abduct train t5``, whose body lives in
:mod:`abduct_t5.cli`). No torch or transformers import here: listing plugins stays fast."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from abduct import Registration, hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration(
        "t5",
        "T5 reading only the context (the clue): log-likelihood of a text, and generation; t5:DIR, t5:NAME, t5:tiny",
        "abduct_t5._model:make_t5",
    )


@hookimpl(optionalhook=True)  # declared by abduct-demo, which may not be installed
def register_demos() -> Iterator[Registration]:
    yield Registration("sherlock-t5", "t5:tiny fine-tuned on the synthetic Sherlock clues vs random",
                       "abduct_t5._demo:sherlock_t5")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_t5.cli import train_t5

    subgroup(cli, "train", "Fine-tune models.").add_command(train_t5)
