"""The record a Sherlock observation becomes once loaded and validated."""

from __future__ import annotations

from dataclasses import dataclass

from abduct.records import Region, VisualInput


@dataclass(frozen=True)
class SherlockInstance:
    """One (image, region, clue, inference) observation of the released annotation files.

    ``image_path`` is the local file resolved from ``image_url`` (see ``layout.ImageRoots``);
    ``split_idx`` is the validation retrieval chunk (None in the training file).
    """

    instance_id: str
    image_url: str
    image_path: str
    width: int
    height: int
    region: Region
    clue: str
    inference: str
    confidence: int
    obs_idx: int
    split_idx: int | None = None

    @property
    def visual(self) -> VisualInput:
        """What a model sees: the image with this observation's region."""
        return VisualInput(self.image_path, self.region)
