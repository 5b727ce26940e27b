"""One NL-EYE sample and how a model sees it.

**Images setup** (default). A (premise, hypothesis) pair is
``VisualInput(premise.png, related=(VisualInput(hypothesisK.png),))`` — the premise as the
media, the hypothesis as its related input, in reading order — scored with an empty text
(the candidate is the image, not a text). A model must therefore accept ``related``
inputs: a single-image model (``clip:tiny``) is refused with one line, and scores NL-EYE
only through ``score_by=similarity`` (the dual-encoder premise-hypothesis image similarity).

**Text setup** (``setup=text``): the gold descriptions, text only: the premise description
is the context and the hypothesis description the text.

**Captions setup** (``setup=captions``): as the text setup, on captions a captioning model
wrote for the three images (``captions.py``): the task puts them in the sample's
description fields first, so ``pair``/``triplet`` read them like descriptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from abduct import VisualInput

CATEGORY_FIELDS = ("reasoning_category", "domain", "time_direction", "time_duration")
Setup = Literal["images", "text", "captions"]


@dataclass(frozen=True)
class NleyeSample:
    """A validated row of ``test_set.csv``; ``gold`` is 1 or 2 (hypothesis1 or hypothesis2)."""

    sample_id: str
    gold: int
    premise_image: str
    hypothesis_images: tuple[str, str]
    categories: dict[str, str] = field(default_factory=dict)
    premise_text: str | None = None
    hypothesis_texts: tuple[str, str] | None = None
    explanation: str | None = None
    row: int = 0
    file: str = ""  # the CSV it was read from (what a task's one-line errors name)

    @property
    def id(self) -> str:
        """The sample's id (``sample_id``): how a run finds it for its sample views."""
        return self.sample_id

    def pair(self, hypothesis: int, setup: Setup = "images") -> tuple[VisualInput, str]:
        """The (input, text) a scorer rates for hypothesis 1 or 2 (see the module docstring)."""
        if setup != "images":
            assert self.premise_text is not None and self.hypothesis_texts is not None
            return VisualInput(context=self.premise_text), self.hypothesis_texts[hypothesis - 1]
        return VisualInput(self.premise_image, related=(VisualInput(self.hypothesis_images[hypothesis - 1]),)), ""

    def triplet(self, first: int, setup: Setup = "images") -> VisualInput:
        """The premise and both hypotheses, hypothesis ``first`` shown first (generators)."""
        order = (first, 3 - first)
        if setup != "images":
            assert self.premise_text is not None and self.hypothesis_texts is not None
            texts = self.hypothesis_texts
            return VisualInput(context=f"Premise: {self.premise_text}\nHypothesis 1: {texts[order[0] - 1]}\n"
                                       f"Hypothesis 2: {texts[order[1] - 1]}")
        return VisualInput(self.premise_image,
                           related=tuple(VisualInput(self.hypothesis_images[k - 1]) for k in order))

    def explained(self, setup: Setup = "images") -> VisualInput:
        """The premise with the GOLD hypothesis (``nleye-explanation``): the premise image with
        the gold hypothesis image as its related input, or (text, captions) the two
        descriptions as context."""
        if setup != "images":
            assert self.premise_text is not None and self.hypothesis_texts is not None
            return VisualInput(context=f"Premise: {self.premise_text}\n"
                                       f"Hypothesis: {self.hypothesis_texts[self.gold - 1]}")
        return VisualInput(self.premise_image, related=(VisualInput(self.hypothesis_images[self.gold - 1]),))
