"""What the host reads off and does to a ``VisualInput`` (the methods of ``abduct.VisualInput``
call these): the features it carries, the input with some of them removed, its identity string.
Below the contract, so that the record shows its fields and what they mean, not this machinery."""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePath
from typing import Any


def features(visual: Any) -> frozenset[str]:
    """What ``visual`` carries, its related inputs included (see ``abduct.contract.FEATURES``)."""
    found = set()
    if visual.media is not None:
        found.add(visual.kind)
    if visual.region is not None:
        found.add("region")
    if visual.context is not None:
        found.add("context")
    if visual.related:
        found.add("related")
        for other in visual.related:
            found |= features(other)
    return frozenset(found)


def without(visual: Any, dropped: frozenset[str]) -> Any:
    """``visual`` with the features ``dropped`` removed, its related inputs included."""
    if not dropped & features(visual):
        return visual
    drop_media = visual.kind in dropped
    return replace(
        visual,
        media=None if drop_media else visual.media,
        region=None if drop_media or "region" in dropped else visual.region,
        context=None if "context" in dropped else visual.context,
        spans=() if drop_media else visual.spans,
        related=() if "related" in dropped else tuple(without(r, dropped) for r in visual.related),
    )


def key(visual: Any, portable: bool) -> str:
    """The identity string of ``visual``; ``portable`` keeps only the media path's last two parts."""
    media = visual.media or ""
    if portable and visual.media is not None:
        media = "/".join(PurePath(visual.media).parts[-2:])
    parts = [media if visual.kind == "image" else f"video:{media}"]
    if visual.region is not None:
        parts.append(";".join(f"{b.left},{b.top},{b.width},{b.height}" for b in visual.region.boxes))
    if visual.spans:
        parts.append("t=" + ";".join(f"{s},{e}" for s, e in visual.spans))
    if visual.context is not None:
        parts.append("c=" + visual.context)
    parts.extend("r=(" + key(r, portable) + ")" for r in visual.related)
    return "|".join(parts)
