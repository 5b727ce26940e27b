"""abduct plugin: registrations only (the ``clip`` model; ``abduct train clip`` and
``abduct demo``, whose bodies live in :mod:`abduct_clip.cli`).

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
        "abduct_clip._scorer:make_clip",
    )


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.cli import subgroup
    from abduct_clip.cli import demo, train_clip

    subgroup(cli, "train", "Fine-tune models.").add_command(train_clip)
    cli.add_command(demo)
