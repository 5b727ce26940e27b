"""``abduct train lxmert``: only click here; torch loads when the command runs."""

from __future__ import annotations

from typing import Any

import click

from abduct_regions.cli_options import train_options


@click.command("lxmert")
@train_options(model="lxmert:tiny", tasks=("sherlock", "cosim"))
def train_lxmert(**kwargs: Any) -> None:
    """Fine-tune LXMERT: the Sherlock triplet loss (margin 0.2) on a dataset's pairs, or with
    --task cosim the 4-way cross-entropy over CoSIm's choices (torchrun for several GPUs).

    Writes last/ (resumable; running the same command again resumes) and best/ (best
    validation figure) into --out; both load as lxmert:DIR.
    """
    from abduct_lxmert._model import FAMILY
    from abduct_regions.training import train_from_options

    train_from_options(FAMILY, kwargs)
