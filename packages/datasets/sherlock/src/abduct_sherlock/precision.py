"""What abduct reports where the official scorer's arithmetic loses information.

The headline is always the official scorer's number (``metrics.official_*``): a leaderboard
entry and ``abduct score`` must agree. Where the official arithmetic differs from full
precision on some images or sources, one warning names the file (or the task), how many, both
values and the fix, and the output keeps the full-precision figure under ``full_precision``.
Where the official scorer has no number for an image (lapjv given infinite costs), that image
counts with abduct's full-precision value and ``official_unavailable`` says how many.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from abduct_sherlock.metrics import macro_percent


class OfficialArithmeticWarning(UserWarning):
    """The official scorer's arithmetic gives another number than full precision."""


@dataclass(frozen=True)
class Loss:
    """How one task's official arithmetic loses information and how to avoid it."""

    unit: str  # what the figure is a macro mean over
    why: str  # what the official arithmetic does to such scores
    unavailable: str  # why it has no number at all, where that can happen
    fix: str


GT_LOSS = Loss(
    "images",
    "its lapjv solves in float32, where these scores round together (gaps below float32's resolution, subnormal "
    "values) and its assignment is not the best one for the exact scores",
    "its lapjv solves in float32, where these scores are infinite (+-inf, or beyond float32's range): it returns "
    "-1 for some boxes or aborts the process, as at 1e300",
    "shift and scale each image's scores into [-1, 1] (subtract the midpoint of their range, divide by half the "
    "range: no assignment changes rank), as abduct's full precision does, and give -inf/inf scores finite values "
    "below/above the others")
COMPARISON_LOSS = Loss(
    "sources",
    "its tie-break offsets, below 1e-9, are added to the float64 scores: next to scores near 1e8 they round away "
    "and leave ties unbroken (as between equal infinities), and they reorder scores closer than 1e-9 (subnormal ones)",
    "",
    "shift and scale the scores into [-1, 1] (subtract the midpoint of their range, divide by half the range; "
    "each source's own range works too), so that distinct scores differ by well over 1e-9, and give -inf/inf "
    "scores finite values below/above the others")


def summary(records: Sequence[Mapping[str, Any]], metric: str, loss: Loss, where: str) -> dict[str, Any]:
    """The entries to add beside ``metric``'s headline, from per-unit records holding ``metric``
    (the official value), ``<metric>_full_precision`` where full precision differs and
    ``<metric>_official`` ("degraded" or "unavailable") where the official arithmetic lost
    information: ``full_precision`` and ``official_unavailable`` (a count of ``loss.unit``), and
    one warning naming ``where``. Empty where nothing was lost (exact ties that the two break
    differently lose nothing: the official choice is the official tie rule)."""
    rows = [r for r in records if metric in r]
    degraded = sum(r.get(f"{metric}_official") == "degraded" for r in rows)
    unavailable = sum(r.get(f"{metric}_official") == "unavailable" for r in rows)
    if not degraded and not unavailable:
        return {}
    headline = macro_percent([r[metric] for r in rows])
    exact = macro_percent([r.get(f"{metric}_full_precision", r[metric]) for r in rows])
    extras: dict[str, Any] = {"full_precision": {metric: exact}}
    parts = []
    if degraded:
        parts.append(f"the official arithmetic loses information on {degraded} of {len(rows)} {loss.unit} ({loss.why})")
    if unavailable:
        extras["official_unavailable"] = {metric: unavailable}
        parts.append(f"the official scorer has no {metric} for {unavailable} of {len(rows)} {loss.unit} "
                     f"({loss.unavailable}); they count with abduct's full-precision value")
    shown = "official where it has one" if unavailable else "official"
    warnings.warn(f"{where}: {'; '.join(parts)}: {metric} {headline:.4f} ({shown}), {exact:.4f} (full precision). "
                  f"To make them agree, {loss.fix}", OfficialArithmeticWarning, stacklevel=2)
    return extras
