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

    @property
    def id(self) -> str:
        return str(self.index)

    def context(self, mode: ContextMode = "full") -> str | None:
        """The context string for ``mode`` (see the module docstring); None for ``none``."""
        if mode == "full":
            return SEP.join((self.question, self.answer_orig, self.change))
        if mode == "question_change":
            return SEP.join((self.question, self.change))
        return None

    def visual(self, mode: ContextMode = "full") -> VisualInput:
        """The image, with the context of ``mode``."""
        return VisualInput(self.image_path, context=self.context(mode))
