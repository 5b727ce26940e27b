"""BlackSwan's questions as the loader gives them, one class per repo.

Every question keeps its ``q_id`` as the file gives it (an integer or a string) and is keyed by
``id = str(q_id)``, as the challenge's submission file is; ``task`` is ``Forecaster``,
``Detective`` or ``Reporter``; ``clips`` its video clips (absolute paths by role, and the
video's id, shared by all its questions: ``clips.video``); ``file`` and ``place`` where it was
read. A label is None where the split hides it (test).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from abduct_blackswan.clips import Clips

DIFFICULTIES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class McqQuestion:
    """A Detective or Reporter multiple-choice question: three options, ``label`` the 0-based
    index of the right one (``mcq_gt_option``)."""

    id: str
    q_id: Any
    task: str
    difficulty: str
    question: str
    options: tuple[str, str, str]
    label: int | None
    clips: Clips
    file: str = ""
    place: str = ""

    @property
    def video(self) -> str:
        return self.clips.video


@dataclass(frozen=True)
class YnLayout:
    """Which field of the Y/N file holds what (``yn.discover``): the file's field names are not
    verified, so they are found on the file and recorded in results.json."""

    id: str
    hypothesis: str
    task: str
    label: str | None = None
    question: str | None = None
    difficulty: str | None = None

    def describe(self) -> dict[str, str]:
        return {role: name for role, name in vars(self).items() if name is not None}


@dataclass(frozen=True)
class YnQuestion:
    """A Detective or Reporter yes/no question: is ``hypothesis`` still possible (Detective,
    given the pre- and post-event clips) or still valid (Reporter, given the whole video)?
    ``label`` True for yes; ``question`` the file's own question text, when it has one."""

    id: str
    q_id: Any
    task: str
    hypothesis: str
    label: bool | None
    clips: Clips
    difficulty: str | None = None
    question: str | None = None
    file: str = ""
    place: str = ""
    layout: YnLayout | None = field(default=None, compare=False, repr=False)

    @property
    def video(self) -> str:
        return self.clips.video


@dataclass(frozen=True)
class GenQuestion:
    """A Forecaster, Detective or Reporter generative question: ``references`` the reference
    answers (``gt_ref_ans``; empty where the split hides them), ``question`` the file's own
    question text when it has one."""

    id: str
    q_id: Any
    task: str
    references: tuple[str, ...]
    clips: Clips
    question: str | None = None
    difficulty: str | None = None
    file: str = ""
    place: str = ""

    @property
    def video(self) -> str:
        return self.clips.video
