"""One CoSIm record and how a model sees it.

A record's id is its index in its file (the release has no ids). Texts are kept exactly as
released (double spaces, spaces before dots, trailing dots).

The model's input for each of the four choices is the image with a context string, and the
choice as the text. The context is the record's fields joined with ``SEP`` (``" [SEP] "``)
in the paper's order, so that a text model that appends ``SEP`` and the choice reads
``question [SEP] initial response [SEP] change [SEP] choice``:

- ``full`` (default): ``question [SEP] answer_orig [SEP] change``;
- ``question_change``: ``question [SEP] change`` (the paper's question+change+response
  text-only ablation, 44.62 on val when trained);
- ``none``: no context at all (the paper's response-only ablation, 38.37): the choice alone.

A record read through the ``cosim`` dataset also carries the dataset's options when the user
gave them (``--dataset cosim,context=...,image_root=...``): ``context_mode``, the context it is
shown with, and ``image_root``, the image folder its
``image_path`` was resolved against. Both are None when not given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from abduct import VisualInput

SEP = " [SEP] "
ContextMode = Literal["full", "question_change", "none"]
CONTEXT_MODES: tuple[ContextMode, ...] = ("full", "question_change", "none")


@dataclass(frozen=True)
class CosimRecord:
    """A validated record of ``train.json`` or ``val.json``."""

    index: int
    question: str
    answer_orig: str
    change: str
    choices: tuple[str, str, str, str]
    label: int
    folder: str
    img_fn: str
    type: str
    image_path: str
    context_mode: ContextMode | None = None  # the dataset's context= option; None: not given (full)
    image_root: str | None = None  # the dataset's image_root= option; None: not given (DIR/images)

    @property
    def id(self) -> str:
        return str(self.index)

    def context(self, mode: ContextMode | None = None) -> str | None:
        """The context string for ``mode`` (default: the dataset's ``context_mode``, else ``full``;
        see the module docstring); None for ``none``."""
        mode = mode or self.context_mode or "full"
        if mode == "full":
            return SEP.join((self.question, self.answer_orig, self.change))
        if mode == "question_change":
            return SEP.join((self.question, self.change))
        return None

    def visual(self, mode: ContextMode | None = None) -> VisualInput:
        """The image, with the context of ``mode`` (default as for ``context``)."""
        return VisualInput(self.image_path, context=self.context(mode))
