"""One WHOOPS! image and its annotations, as the release describes them.

Every released form has the same columns: six strings (``image``, ``designer_explanation``,
``selected_caption``, ``commonsense_category``, ``image_id``, ``image_designer``), three lists of
strings (``crowd_captions``, ``crowd_explanations``, ``crowd_underspecified_captions``) and
``question_answering_pairs``, a list of ``[question, answer]``.
"""

from __future__ import annotations

from dataclasses import dataclass

STRING_COLUMNS = ("designer_explanation", "selected_caption", "commonsense_category", "image_id", "image_designer")
LIST_COLUMNS = ("crowd_captions", "crowd_explanations", "crowd_underspecified_captions")
QA_COLUMN = "question_answering_pairs"
# the order of the released CSV's header
COLUMNS = ("image", "designer_explanation", "selected_caption", "crowd_captions", "crowd_explanations",
           "crowd_underspecified_captions", "question_answering_pairs", "commonsense_category", "image_id",
           "image_designer")


@dataclass(frozen=True)
class WhoopsImage:
    """A validated row; ``path`` is the image file on disk, ``row`` where the row came from
    (a CSV line or a table index), for messages."""

    image_id: str
    path: str
    designer_explanation: str
    selected_caption: str
    commonsense_category: str
    image_designer: str
    crowd_captions: tuple[str, ...]
    crowd_explanations: tuple[str, ...]
    crowd_underspecified_captions: tuple[str, ...]
    question_answering_pairs: tuple[tuple[str, str], ...]
    row: str = ""

    @property
    def explanations(self) -> tuple[str, ...]:
        """The references of the explanation task: the designer's, then the crowd's."""
        return (self.designer_explanation, *self.crowd_explanations)
