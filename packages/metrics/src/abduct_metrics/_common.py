"""What every metric factory of this package shares (cheap to import: no torch here)."""

from __future__ import annotations

from abduct import AbductError, Spec

SCALE = 100.0
"""Every value this package reports (corpus and per sample) is 100 x the implementation's own,
the scale of the papers' tables (BLEU-4 31, CIDEr 120, BERT-S 30.64, BEM 55); counts and
``info`` statistics (BLEU's n-gram counts) are left as they are."""


def scaled(values: dict[str, float]) -> dict[str, float]:
    """``values`` x ``SCALE``."""
    return {key: SCALE * value for key, value in values.items()}


def no_argument(spec: Spec) -> None:
    """These metrics take options only (``cider,clean_non_ascii=true``), never ``name:argument``."""
    if spec.argument is not None or spec.tag is not None:
        raise AbductError(f"metric '{spec.name}' takes no ':argument' or '@tag', only options "
                          f"(e.g. '{spec.name},key=value'); got '{spec}'")

