"""``abduct train uniter``: only click here; torch loads when the command runs."""

from __future__ import annotations

from abduct_regions.cli_options import train_command

train_uniter = train_command("uniter", "abduct_uniter._model", """Fine-tune UNITER: the Sherlock triplet loss (margin 0.2) on a dataset's pairs, or with
    --task cosim the 4-way cross-entropy over CoSIm's choices (torchrun for several GPUs).

    Writes last/ (resumable; running the same command again resumes) and best/ (best
    validation figure) into --out; both load as uniter:DIR.
    """)
