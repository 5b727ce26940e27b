"""One riddle of ``test/metadata.csv``, read through the layout found on the file (``layout.py``).

Each task reads the columns it needs from the riddle's ``cells`` with ``Riddle.cell``, so a
column only one task uses (the multiple-choice prompt, the judge prompts) refuses that task
alone, in one line naming the columns found, and never the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from abduct import DataError, VisualInput
from abduct_visualriddles.layout import COLUMNS, SPLIT, Layout, metadata_file, read_metadata

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
Setup = Literal["plain", "hint", "attribution"]
SETUPS: tuple[Setup, ...] = ("plain", "hint", "attribution")


@dataclass(frozen=True)
class Riddle:
    """A validated row: its id, image, question and ground-truth answer; every other cell is in
    ``cells`` and read by role (``cell``)."""

    id: str
    image: str
    question: str
    answer: str
    cells: dict[str, str]
    layout: Layout
    row: int

    def cell(self, role: str, needed_by: str) -> str:
        """The stripped cell of ``role`` (empty when the cell is); a missing column is one line."""
        return self.cells[self.layout.column(role, needed_by)].strip()

    def optional(self, role: str) -> str:
        """The stripped cell of ``role``; empty when the file has no such column."""
        column = self.layout.found.get(role)
        return self.cells[column].strip() if column else ""

    def visual(self, with_image: bool = True, context: str | None = None) -> VisualInput:
        """The riddle's image (``with_image=False``: none, the text-only setup), with ``context``."""
        return VisualInput(self.image if with_image else None, context=context)

    def context(self, setup: Setup, needed_by: str) -> str:
        """The auxiliary line a setup adds before the question (empty for ``plain``)."""
        if setup == "plain":
            return ""
        return f"{setup.capitalize()}: {self.cell(setup, needed_by)}"


def with_setup(riddles: Sequence[Riddle], setup: Setup, needed_by: str) -> tuple[list[Riddle], list[str]]:
    """The riddles a setup can ask, and the ids of those whose hint or attribution cell is empty
    (left out and counted: whether every released riddle has both is not documented)."""
    if setup == "plain":
        return list(riddles), []
    kept = [r for r in riddles if r.cell(setup, needed_by)]
    return kept, [r.id for r in riddles if not r.cell(setup, needed_by)]


def _image_path(folder: Path, value: str) -> Path | None:
    """The file a link cell names under ``folder``: its last path part (a URL's too), with an
    image suffix added when it has none (an ``image_id``)."""
    name = value.strip().rsplit("/", 1)[-1].split("?", 1)[0]
    if not name:
        return None
    candidates = [name] if Path(name).suffix.lower() in IMAGE_SUFFIXES else [name + s for s in IMAGE_SUFFIXES]
    return next((folder / c for c in candidates if (folder / c).is_file()), None)


def load_riddles(data_dir: Path, split: str = SPLIT) -> list[Riddle]:
    """Every riddle of the split, its image resolved under ``test/`` (a missing one is one line)."""
    path = metadata_file(data_dir, split)
    layout, rows = read_metadata(path)
    links = [n for n in COLUMNS["image"] if n in layout.header]  # each tried in turn: some may be left empty
    id_col = layout.found.get("id")
    riddles, seen = [], set()
    for number, cells in enumerate(rows, start=1):
        image = next((p for p in (_image_path(path.parent, cells[n]) for n in links) if p is not None), None)
        if image is None:
            named = "; ".join(f"{n}={cells[n]!r}" for n in links)
            raise DataError(f"no image in {path.parent} for {named}", file=path, record=f"row {number}")
        raw_id = cells[id_col].strip() if id_col else ""
        riddle_id = (Path(raw_id.rsplit("/", 1)[-1]).stem if id_col == "file_name" else raw_id) or image.stem
        if riddle_id in seen:
            raise DataError(f"riddle id {riddle_id!r} given twice", file=path, record=f"row {number}")
        seen.add(riddle_id)
        texts = {}
        for role in ("question", "answer"):
            column = layout.column(role)
            texts[role] = cells[column].strip()
            if not texts[role]:
                raise DataError("empty", file=path, record=f"row {number} ({riddle_id})", field=column)
        riddles.append(Riddle(riddle_id, str(image), texts["question"], texts["answer"], cells, layout, number))
    return riddles
