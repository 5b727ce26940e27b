"""One NYCC instance, as the three tasks read it.

Every row of a config's split becomes an ``NyccItem``: its ``instance_id`` (the key of the
official prediction files), the fold whose config it was read from, the cartoon (a file: the
parquet ``image`` bytes are written once to the abduct cache), and the task's fields:
matching/ranking the captions (``choices``) and the gold letter's index (``label``, None on the
leaderboard set, which has no labels), ranking the finalist's source (``winner_source``),
explanation the winning caption (``caption``) and the reference explanation (``explanation``).
From-description configs add the annotations (``description``: the release's pre-formatted
``from_description`` string).
"""

from __future__ import annotations

from dataclasses import dataclass

from abduct import VisualInput

TASKS = ("matching", "ranking", "explanation")
LETTERS = {"matching": "ABCDE", "ranking": "AB"}
N_FOLDS = 5


@dataclass(frozen=True)
class NyccItem:
    instance_id: str
    fold: int | None  # None: the leaderboard set
    image: str
    contest_number: int | None = None
    choices: tuple[str, ...] = ()
    label: int | None = None
    winner_source: str | None = None
    caption: str = ""
    explanation: str = ""
    description: str | None = None
    file: str = ""
    row: int = 0

    @property
    def id(self) -> str:
        return self.instance_id

    def visual(self, input: str) -> VisualInput:
        """What a model sees: the cartoon (``pixels``) or the annotations as text (``description``)."""
        if input == "description":
            assert self.description is not None
            return VisualInput(context=self.description)
        return VisualInput(self.image)
