"""abduct plugin: registrations only (the ``clip`` model; ``abduct train clip``, whose body
lives in :mod:`abduct_clip.cli`; the demo's ``sherlock-clip`` section).

No torch or open_clip import here: listing plugins stays fast.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from abduct import Registration, hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration(
        "clip",
        "CLIP dual encoder (open_clip) seeing the region drawn on the image: clip:ViT-B-16@openai, clip:/ckpt.pt, clip:tiny",
        "abduct_clip.factory:make_clip",
    )


@hookimpl(optionalhook=True)  # declared by abduct-demo, which may not be installed
def register_demos() -> Iterator[Registration]:
    yield Registration("sherlock-clip", "clip:tiny fine-tuned on the synthetic Sherlock corpus vs random and untrained",
                       "abduct_clip._demo:sherlock_clip")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_clip.cli import train_clip

    subgroup(cli, "train", "Fine-tune models.").add_command(train_clip)
