"""What a vision-language model is asked: the prompt templates, their defaults, and the
images of an input, in order. Shared by local (``vlm``) and served (``openai``) models.

Three templates, each overridable in the model's spec (an unknown placeholder is a one-line
error when the model is built):

- ``template`` (generation; ``{prompt}``, ``{context}``, ``{region}``): the task's prompt
  (NL-EYE's "Answer with 1 or 2 only", ...) or, when the task gives none, ``question``;
- ``score_template`` (log-likelihood of a candidate text; ``{context}``, ``{region}``): the
  candidate is the answer the model is scored on (Sherlock comparison: the inference given the
  image, the highlighted region and the clue);
- ``answer_template`` (log-likelihood of a fixed ``answer``, "yes" by default; ``{context}``,
  ``{region}``, ``{text}``): used when the candidate is no text but the images themselves
  (NL-EYE pairs: premise and hypothesis images) or with ``score=answer``.

``{context}`` is the input's context text (a Sherlock clue, NL-EYE's descriptions), ``{region}``
the sentence ``REGION_NOTE`` when the input has a region (drawn on the image with the core's
highlight), empty otherwise. After filling, runs of spaces collapse and lines are trimmed, so
an empty placeholder leaves no gap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from abduct import AbductError, VisualInput
from abduct.kit import check_template

REGION_NOTE = "The region of interest is highlighted in magenta with a green outline."
DEFAULT_QUESTION = "What is the most plausible inference about what is shown? Answer in one sentence."
DEFAULT_TEMPLATE = "{region} {context}\n{prompt}"
DEFAULT_SCORE_TEMPLATE = "{region} {context}\nWhat can be inferred? Answer in one sentence."
DEFAULT_ANSWER_TEMPLATE = (
    "{context}\nThe first image is the premise and the next image a hypothesis. Is the hypothesis a plausible "
    "outcome or explanation of the premise? Answer yes or no."
)
DEFAULT_ANSWER = "yes"
GENERATION_FIELDS = ("prompt", "context", "region")
SCORE_FIELDS = ("context", "region")
ANSWER_FIELDS = ("context", "region", "text")
ScoreMode = Literal["auto", "text", "answer"]


def tidy(text: str) -> str:
    """Collapse runs of spaces and trim each line; drop empty lines at either end."""
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.splitlines()]
    return "\n".join(lines).strip()


@dataclass(frozen=True)
class Prompts:
    """A model's templates, checked once; ``fill_*`` build the text of one request."""

    template: str = DEFAULT_TEMPLATE
    score_template: str = DEFAULT_SCORE_TEMPLATE
    answer_template: str = DEFAULT_ANSWER_TEMPLATE
    question: str = DEFAULT_QUESTION
    answer: str = DEFAULT_ANSWER
    score: ScoreMode = "auto"

    def __post_init__(self) -> None:
        check_template(self.template, GENERATION_FIELDS, "template")
        check_template(self.score_template, SCORE_FIELDS, "score_template")
        check_template(self.answer_template, ANSWER_FIELDS, "answer_template")
        if not self.answer.strip():
            raise AbductError("answer must be a non-empty text (e.g. answer=yes)")

    def describe(self) -> str:
        return "|".join([self.template, self.score_template, self.answer_template, self.question, self.answer,
                         self.score])

    @staticmethod
    def _values(visual: VisualInput) -> dict[str, str]:
        return {"context": visual.context or "", "region": REGION_NOTE if _has_region(visual) else ""}

    def generation(self, visual: VisualInput, prompt: str | None) -> str:
        return tidy(self.template.format_map({**self._values(visual), "prompt": prompt or self.question}))

    def scoring(self, visual: VisualInput, text: str) -> tuple[str, str]:
        """(prompt, answer whose log-likelihood is the score) for the candidate ``text``."""
        if self.score == "text" or (self.score == "auto" and text.strip()):
            if not text.strip():
                raise AbductError("score=text scores a candidate text, and this task's candidate is empty "
                                  "(it is the images): use score=auto or score=answer")
            return tidy(self.score_template.format_map(self._values(visual))), text
        if text.strip() and "{text}" not in self.answer_template:
            raise AbductError("this task scores candidate texts, and answer_template has no {text}: every candidate "
                              "would get the same score (put {text} in answer_template, or use score=auto)")
        return tidy(self.answer_template.format_map({**self._values(visual), "text": text})), self.answer


def _has_region(visual: VisualInput) -> bool:
    return visual.region is not None or any(_has_region(r) for r in visual.related)


def visual_parts(visual: VisualInput) -> list[VisualInput]:
    """The input and then each related input, depth first, in order: one image each (a part
    without media contributes none)."""
    parts = [visual]
    for related in visual.related:
        parts += visual_parts(related)
    return parts


def media_count(visuals: Sequence[VisualInput]) -> int:
    return sum(1 for v in visuals for part in visual_parts(v) if part.media is not None)
