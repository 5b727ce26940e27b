"""What every metric factory of this package shares (cheap to import: no torch here)."""

from __future__ import annotations

from abduct import AbductError, Spec


def no_argument(spec: Spec) -> None:
    """These metrics take options only (``cider,clean_non_ascii=true``), never ``name:argument``."""
    if spec.argument is not None or spec.tag is not None:
        raise AbductError(f"metric '{spec.name}' takes no ':argument' or '@tag', only options "
                          f"(e.g. '{spec.name},key=value'); got '{spec}'")

