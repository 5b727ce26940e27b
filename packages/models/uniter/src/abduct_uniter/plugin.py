"""abduct plugin: registrations only (the ``uniter`` model, ``abduct train uniter``, the demo's ``sherlock-uniter`` section); no torch here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from abduct import Registration, hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration("uniter", "UNITER cross-encoder on region features (clue region first; loads the official checkpoint): uniter:tiny, uniter:DIR",
                       "abduct_uniter._model:make_uniter")


@hookimpl(optionalhook=True)  # declared by abduct-demo, which may not be installed
def register_demos() -> Iterator[Registration]:
    yield Registration("sherlock-uniter", "uniter:tiny trained with the triplet loss on the synthetic Sherlock corpus vs random",
                       "abduct_uniter._demo:sherlock_uniter")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_uniter.cli import train_uniter

    subgroup(cli, "train", "Fine-tune models.").add_command(train_uniter)
