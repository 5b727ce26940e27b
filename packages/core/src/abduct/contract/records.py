"""Frozen records shared by every package: boxes, regions and what a model is given.

One ``VisualInput`` serves all five benchmarks: an image with a region and a clue (Sherlock),
an image with a question and a scene change (CoSIm), a premise beside its hypotheses
(NL-EYE), a video with the time spans of an event chain (VAR), a text-only input (a text
scorer's view of any of them).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import PurePath

MEDIA_KINDS = ("image", "video")
# What an input can carry; models declare which of these they accept (read by abduct.host.model_traits).
FEATURES = ("image", "video", "region", "context", "related")


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in pixel coordinates of the original image."""

    left: float
    top: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height

    @property
    def area(self) -> float:
        return max(self.width, 0.0) * max(self.height, 0.0)

    def iou(self, other: Box) -> float:
        """Intersection over union; 0.0 when both boxes are empty."""
        w = min(self.right, other.right) - max(self.left, other.left)
        h = min(self.bottom, other.bottom) - max(self.top, other.top)
        inter = max(w, 0.0) * max(h, 0.0)
        union = self.area + other.area - inter
        return inter / union if union > 0 else 0.0


@dataclass(frozen=True)
class Region:
    """One or more boxes that together ground a clue (Sherlock averages 1.17 per clue)."""

    boxes: tuple[Box, ...]

    def __post_init__(self) -> None:
        if not self.boxes:
            raise ValueError("a Region needs at least one box")


@dataclass(frozen=True)
class VisualInput:
    """What a model is given for one example.

    - ``media``: local path of an image or a video (``kind``); None for a text-only input;
    - ``region``: the part of the image the text is about;
    - ``context``: text that comes with the media (a clue, a question and scene change,
      a description);
    - ``spans``: for a video, the time spans in seconds that matter, in order;
    - ``related``: further inputs shown together with this one, in order, each a full input
      with its own region or spans (NL-EYE's hypotheses, the other videos of a VAR chain).
    """

    media: str | None = None
    region: Region | None = None
    context: str | None = None
    spans: tuple[tuple[float, float], ...] = ()
    related: tuple[VisualInput, ...] = ()
    kind: str = "image"

    def __post_init__(self) -> None:
        if self.kind not in MEDIA_KINDS:
            raise ValueError(f"unknown media kind {self.kind!r} (expected image or video)")
        if self.spans and self.kind != "video":
            raise ValueError("time spans belong to video inputs (kind='video')")
        for start, end in self.spans:
            if not 0 <= start <= end:
                raise ValueError(f"bad time span ({start}, {end}): need 0 <= start <= end")
        if self.media is None and (self.region is not None or self.spans):
            raise ValueError("a region or a time span needs media")

    @classmethod
    def video(
        cls, path: str, spans: tuple[tuple[float, float], ...] = (), *, context: str | None = None,
        related: tuple[VisualInput, ...] = (),
    ) -> VisualInput:
        return cls(path, context=context, spans=tuple(spans), related=tuple(related), kind="video")

    def features(self) -> frozenset[str]:
        """What this input carries, its related inputs included (see ``FEATURES``)."""
        found = {self.kind} if self.media is not None else set()
        found |= {name for name, value in (("region", self.region), ("context", self.context)) if value is not None}
        if self.related:
            found.add("related")
            found = found.union(*(other.features() for other in self.related))
        return frozenset(found)

    def without(self, features: frozenset[str]) -> VisualInput:
        """This input with ``features`` removed, its related inputs included."""
        if not features & self.features():
            return self
        drop_media = self.kind in features
        return replace(
            self,
            media=None if drop_media else self.media,
            region=None if drop_media or "region" in features else self.region,
            context=None if "context" in features else self.context,
            spans=() if drop_media else self.spans,
            related=() if "related" in features else tuple(r.without(features) for r in self.related),
        )

    def key(self, *, portable: bool = False) -> str:
        """A stable identity string. ``portable`` keeps only the media path's last two parts,
        so the same data gives the same key wherever its directory lies."""
        media = self.media or ""
        if portable and self.media is not None:
            media = "/".join(PurePath(self.media).parts[-2:])
        parts = [media if self.kind == "image" else f"video:{media}"]
        if self.region is not None:
            parts.append(";".join(f"{b.left},{b.top},{b.width},{b.height}" for b in self.region.boxes))
        if self.spans:
            parts.append("t=" + ";".join(f"{s},{e}" for s, e in self.spans))
        if self.context is not None:
            parts.append("c=" + self.context)
        parts.extend("r=(" + r.key(portable=portable) + ")" for r in self.related)
        return "|".join(parts)


@dataclass(frozen=True)
class GenerationRequest:
    """One thing to generate: text for ``visual`` (with its context), after ``prompt``."""

    visual: VisualInput
    prompt: str | None = None


@dataclass(frozen=True)
class GroundedText:
    """A (visual input, text) pair as a dataset offers it for training: ``text`` is the
    target (e.g. a Sherlock inference), ``visual.context`` any side text (the clue), and
    ``group`` an evaluation grouping (e.g. a retrieval chunk)."""

    id: str
    visual: VisualInput
    text: str
    group: str | None = None
