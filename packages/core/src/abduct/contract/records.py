"""Frozen records shared by every package: boxes, regions and what a model is given.

One ``VisualInput`` serves all five benchmarks: an image with a region and a clue (Sherlock),
an image with a question and a scene change (CoSIm), a premise beside its hypotheses
(NL-EYE), a video with the time spans of an event chain (VAR), a text-only input (a text
scorer's view of any of them).
"""

from __future__ import annotations

from dataclasses import dataclass

import abduct._input_ops as _input_ops

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
        return _input_ops.features(self)

    def without(self, features: frozenset[str]) -> VisualInput:
        """This input with ``features`` removed, its related inputs included."""
        return _input_ops.without(self, features)  # type: ignore[no-any-return]

    def key(self, *, portable: bool = False) -> str:
        """A stable identity string. ``portable`` keeps only the media path's last two parts,
        so the same data gives the same key wherever its directory lies."""
        return _input_ops.key(self, portable)


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
