"""abduct plugin: registrations only (the ``lxmert`` model, ``abduct train lxmert``, the demo's ``sherlock-lxmert`` section); no torch here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from abduct import Registration, hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration("lxmert", "LXMERT cross-encoder on region features (clue region first): lxmert:tiny, lxmert:DIR",
                       "abduct_lxmert._model:make_lxmert")


@hookimpl(optionalhook=True)  # declared by abduct-demo, which may not be installed
def register_demos() -> Iterator[Registration]:
    yield Registration("sherlock-lxmert", "lxmert:tiny trained with the triplet loss on the synthetic Sherlock corpus vs random",
                       "abduct_lxmert._demo:sherlock_lxmert")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_lxmert.cli import train_lxmert

    subgroup(cli, "train", "Fine-tune models.").add_command(train_lxmert)
