"""The record a Sherlock observation becomes once loaded and validated, and what a model is
given for it."""

from __future__ import annotations

from dataclasses import dataclass

from abduct import Region, VisualInput

# The input features a model may go without on every Sherlock task (the tasks' and the
# submission's ``optional_inputs``, a task's declaration). Each input is the image, the
# clue's region and the clue as context, and the paper evaluates models that see only part
# of it: its CLIP models never read the clue (they see the image with the region drawn in,
# and its ablations drop the region), and its text-only T5 row reads only the clue. A model
# that does not accept one of these has it removed (listed in results.json
# ``inputs.ignored``); the chance baseline ``random`` takes no context, so its scores depend
# on (image, region, text) alone, as they always have.
OPTIONAL_INPUTS = frozenset({"image", "region", "context"})


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
        """What a model is given: the image with this observation's region, and its clue as
        context."""
        return VisualInput(self.image_path, self.region, context=self.clue)
