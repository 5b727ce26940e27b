"""A question's video clips, found by their field names.

Which fields name the clips is verified only for the Gen repo (``preevent_file_name``,
``postevent_file_name``); the organisers' own test copy carries a single ``video_path``. So every
field whose name ends in ``_file_name``, and ``video_path``, is read as a clip path relative to
the repo's folder (``""`` means no clip), and its role comes from its name:

| field name | role |
|---|---|
| contains ``pre`` | ``pre``: the pre-event clip |
| contains ``post`` | ``post``: the post-event clip |
| contains ``event`` or ``main`` (and neither of the above) | ``event``: the main event |
| ``video_path``, or contains ``whole`` or ``full`` | ``whole``: the whole video |

A clip field of any other name, or two fields of one role, is refused (the record's layout is
not one this reader knows), never guessed. What each task needs (``require``): Forecaster the
pre-event clip; Detective the pre- and post-event clips (the middle stays hidden, so a whole
video is not enough: whether a released ``video_path`` blacks the middle out is not verified);
Reporter the whole video, or all three clips.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from abduct_blackswan.jsonfile import Raw

ROLES = ("pre", "event", "post", "whole")
TASKS = ("Forecaster", "Detective", "Reporter")


def clip_role(field: str) -> str | None:
    """The role a clip field's name gives it (see the module docstring); None for another name."""
    name = field.lower()
    if name == "video_path" or any(word in name for word in ("whole", "full")):
        return "whole"
    if "pre" in name and "post" not in name:
        return "pre"
    if "post" in name and "pre" not in name:
        return "post"
    if "event" in name or "main" in name:
        return "event"
    return None


PART_SUFFIX = re.compile(r"_(?:[A-E]_)?(?:preevent|event|postevent|merged)$")


def video_id(relative: str) -> str:
    """The video a clip belongs to: its relative path without the extension and without the
    original pipeline's part names (``{set}/{i}_A_preevent.mp4``, ``{set}/{i}_B_event.mp4``,
    ``{set}/{i}_C_postevent.mp4``, ``{set}_merged/{i}_E_merged.mp4`` are all ``{set}/{i}``). A
    name that does not follow them (the release's names are not verified) is its own video."""
    path = PurePosixPath(relative.replace("\\", "/"))
    stem = PART_SUFFIX.sub("", path.stem)
    folder = path.parent.as_posix()
    if stem != path.stem and folder.endswith("_merged"):
        folder = folder[: -len("_merged")]
    return stem if folder in ("", ".") else f"{folder}/{stem}"


def is_clip_field(field: str) -> bool:
    return field.endswith("_file_name") or field == "video_path"


@dataclass(frozen=True)
class Clips:
    """Absolute clip paths by role (None: not given), the fields they came from, and the video's
    id (``video``, ``video_id`` of the pre-event clip's path as the record gives it, else of the
    whole video's), which every question about one video shares (the unit of clustering)."""

    pre: str | None = None
    event: str | None = None
    post: str | None = None
    whole: str | None = None
    fields: tuple[tuple[str, str], ...] = ()  # (role, field name) of every clip field read
    video: str = ""

    def path(self, role: str) -> str | None:
        found: str | None = getattr(self, role)
        return found

    def given(self) -> list[str]:
        """The absolute paths of the clips given, in role order."""
        return [p for p in (self.path(r) for r in ROLES) if p is not None]


def read_clips(raw: Raw, folder: Path) -> Clips:
    """The clip fields of one record, resolved against the repo's ``folder``."""
    found: dict[str, str] = {}
    relative: dict[str, str] = {}
    fields: list[tuple[str, str]] = []
    for name, value in raw.fields.items():
        if not is_clip_field(name):
            continue
        role = clip_role(name)
        if role is None:
            raise raw.error("a clip field of unknown role (known: names with pre, post, event or main, whole or "
                            "full, and video_path): this layout is not one the reader knows", name)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise raw.error(f"expected a relative path (a string), got {value!r}", name)
        if role in found:
            other = next(f for r, f in fields if r == role)
            raise raw.error(f"two clip fields for the {role} clip ('{other}' and '{name}'): ambiguous layout", name)
        found[role] = str((folder / value).absolute())
        relative[role] = value
        fields.append((role, name))
    video = video_id(relative.get("pre") or relative.get("whole") or next(iter(relative.values()), ""))
    return Clips(found.get("pre"), found.get("event"), found.get("post"), found.get("whole"), tuple(fields), video)


def require(raw: Raw, task: str, clips: Clips) -> None:
    """Refuse, in one line, a question whose clips do not give its task what it shows."""
    have = {role for role in ROLES if clips.path(role) is not None}
    shown = ", ".join(f for _, f in clips.fields) or "none"
    if task == "Forecaster" and "pre" not in have:
        raise raw.error(f"a Forecaster question needs its pre-event clip (clip fields given: {shown})")
    if task == "Detective" and not {"pre", "post"} <= have:
        raise raw.error("a Detective question needs its pre- and post-event clips, the middle hidden "
                        f"(clip fields given: {shown})")
    if task == "Reporter" and "whole" not in have and not {"pre", "event", "post"} <= have:
        raise raw.error("a Reporter question needs the whole video (video_path) or its pre-event, event and "
                        f"post-event clips (clip fields given: {shown})")
