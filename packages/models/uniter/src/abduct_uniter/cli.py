"""``abduct train uniter``: only click here; torch loads when the command runs."""

from __future__ import annotations

from typing import Any

import click

from abduct_regions.cli_options import train_options


@click.command("uniter")
@train_options(model="uniter:tiny", tasks=("sherlock", "cosim"))
def train_uniter(**kwargs: Any) -> None:
    """Fine-tune UNITER: the Sherlock triplet loss (margin 0.2) on a dataset's pairs, or with
    --task cosim the 4-way cross-entropy over CoSIm's choices (torchrun for several GPUs).

    Writes last/ (resumable; running the same command again resumes) and best/ (best
    validation figure) into --out; both load as uniter:DIR.
    """
    from abduct_regions.training import train_from_options
    from abduct_uniter._model import FAMILY

    train_from_options(FAMILY, kwargs)
