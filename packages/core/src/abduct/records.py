"""Frozen records shared by every package: boxes, regions and what a model looks at."""

from __future__ import annotations

from dataclasses import dataclass


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
    """What a model sees for one example.

    ``image`` is a local path to an image (or a video file, with ``span`` in seconds);
    ``region`` marks the part the text is about; ``related`` lists further images shown
    together with this one, in order (e.g. an NL-EYE premise beside a hypothesis).
    """

    image: str
    region: Region | None = None
    span: tuple[float, float] | None = None
    related: tuple[str, ...] = ()

    def key(self) -> str:
        """A stable identity string, used to encode each unique input once."""
        parts = [self.image]
        if self.region is not None:
            parts.append(";".join(f"{b.left},{b.top},{b.width},{b.height}" for b in self.region.boxes))
        if self.span is not None:
            parts.append(f"t={self.span[0]},{self.span[1]}")
        parts.extend(self.related)
        return "|".join(parts)
