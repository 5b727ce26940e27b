"""The colour names the synthetic corpus paints with and the colour probe reads (RGB prototypes)."""

from __future__ import annotations

import re

PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40), "green": (40, 180, 60), "blue": (40, 80, 230), "yellow": (235, 215, 40),
    "purple": (150, 60, 190),
}
_WORD = re.compile(r"[a-z]+")


def named(text: str) -> list[str]:
    """The palette's colours ``text`` names, in palette order."""
    words = set(_WORD.findall(text.lower()))
    return [name for name in PALETTE if name in words]
