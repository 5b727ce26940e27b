"""Where the Visual Riddles files are, and which column of ``test/metadata.csv`` holds what.

``--data DIR`` is the Hugging Face repo ``visual-riddles/visual_riddles`` as
``huggingface-cli download visual-riddles/visual_riddles --repo-type dataset --local-dir DIR``
leaves it (an imagefolder: ``DIR/test/<sha256>.jpg`` and ``DIR/test/metadata.csv``), or a hub
cache holding ``datasets--visual-riddles--visual_riddles/snapshots/<commit>/`` (the commit
``refs/main`` names, else the only snapshot). One split, ``test``.

The metadata file was rewritten many times before its last version, and only part of its
fields are documented, so its columns are **found on the file** against ``COLUMNS``: each role
is the first of its names the header holds. A role a task needs and the header lacks is one
line naming the file, the role, the names looked for and every column found (``LayoutError``).
Leftover CSVs beside ``metadata.csv`` (``metadata_old.csv``, ...) are never read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from abduct import AbductError, DataError
from abduct.kit import read_csv_cells, require_dir
from abduct.kit.io import hub_snapshot

REPO_ID = "visual-riddles/visual_riddles"
SPLIT = "test"
METADATA = "metadata.csv"
CACHE_NAME = "datasets--" + REPO_ID.replace("/", "--")
DOWNLOAD = f"huggingface-cli download {REPO_ID} --repo-type dataset --local-dir DIR"

# role -> the column names that hold it, in the order they are looked for. The dataset card names
# every one but the image link's ``file_name`` (the imagefolder convention) and the judge columns
# (the removed loader script's; the earlier spelling ``model_labels-auto_eva`` too).
COLUMNS: dict[str, tuple[str, ...]] = {
    "image": ("file_name", "image", "image_id", "image_url"),  # a file under test/ (its name, or a URL ending in it)
    "id": ("image_id", "file_name"),
    "question": ("question",),
    "answer": ("ground_truth_answer",),
    "hint": ("hint",),
    "attribution": ("attribution",),
    "mcq": ("prompt_clean-multiple_choice",),
    "judge_based": ("prompts_ref_based-auto_eval",),
    "judge_free": ("prompts_ref_free-auto_eval",),
    "judge_labels": ("labels-auto_eval", "model_labels-auto_eva"),
    "category": ("category",),
    "difficulty": ("difficulty_level_index",),
    "caption": ("human-caption",),
    "designer": ("designer",),
    "generator": ("generative_model_name",),
}
REQUIRED = ("image", "question", "answer")  # every task reads these


class LayoutError(DataError):
    """A column a task needs is not in the file: what was looked for, and what was found."""


@dataclass(frozen=True)
class Layout:
    """The header of one metadata file and the column found for each role (``COLUMNS``)."""

    file: Path
    header: tuple[str, ...]
    found: dict[str, str]

    @classmethod
    def of(cls, file: Path, header: list[str]) -> Layout:
        names = tuple(h.strip() for h in header)
        found = {role: next(n for n in wanted if n in names) for role, wanted in COLUMNS.items()
                 if any(n in names for n in wanted)}
        layout = cls(Path(file), names, found)
        for role in REQUIRED:
            layout.column(role)
        return layout

    def column(self, role: str, needed_by: str = "every task") -> str:
        """The column holding ``role``; one line naming the columns found when there is none."""
        if role in self.found:
            return self.found[role]
        wanted = " or ".join(COLUMNS[role])
        raise LayoutError(f"unknown Visual Riddles layout: no {role} column ({wanted}), needed by {needed_by}; "
                          f"columns found: {', '.join(self.header) or 'none'}", file=self.file)

    def describe(self) -> dict[str, str]:
        """``{role: column}`` as found (results.json's details)."""
        return dict(self.found)


def repo_dir(data_dir: Path) -> Path:
    """The repo's folder: ``data_dir`` itself, or its snapshot in a hub cache (module docstring)."""
    data_dir = require_dir(Path(data_dir), "data directory")
    if (data_dir / SPLIT / METADATA).is_file():
        return data_dir
    for cache_repo in (data_dir / CACHE_NAME, data_dir / "hub" / CACHE_NAME, data_dir / "datasets" / CACHE_NAME):
        snapshot = hub_snapshot(cache_repo) if cache_repo.is_dir() else None
        if snapshot is not None:
            return snapshot
    raise AbductError(f"Visual Riddles: no {SPLIT}/{METADATA} in {data_dir} (nor a hub cache {CACHE_NAME}/snapshots/"
                      f"<commit>/); download it with `{DOWNLOAD.replace('DIR', str(data_dir))}`")


def metadata_file(data_dir: Path, split: str = SPLIT) -> Path:
    if split != SPLIT:
        raise AbductError(f"Visual Riddles has one split, '{SPLIT}' (got '{split}')")
    return repo_dir(data_dir) / SPLIT / METADATA


def read_metadata(path: Path) -> tuple[Layout, list[dict[str, str]]]:
    """The layout and the rows (``{column: cell}``) of a metadata file; a row of the wrong width
    is one line naming it (``row N``: the N-th row after the header)."""
    rows = read_csv_cells(path)
    layout = Layout.of(path, rows[0])
    out = []
    for number, cells in enumerate(rows[1:], start=1):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(layout.header):
            raise DataError(f"{len(cells)} cells, the header has {len(layout.header)}", file=path,
                            record=f"row {number}")
        out.append(dict(zip(layout.header, cells)))
    if not out:
        raise DataError("no riddle (a header and no rows)", file=path)
    return layout, out
