"""Sherlock's registered datasets: what each task reads, with the same options for all.

- ``sherlock``: the annotation files' instances (``sherlock-retrieval``; training pairs for
  other packages through the ``PairDataset`` protocol);
- ``sherlock-localization``: one example per image, from ``val_localization/`` or from the
  annotations and proposals (``source=auto|leaderboard|annotations``);
- ``sherlock-comparison``: one example per annotated source of ``val_comparison/``;
- ``sherlock-generation``: the validation instances, with the training inferences as the pool.

Every one takes ``vg_root``/``vcr_root`` (the image folders, as ``$ABDUCT_SHERLOCK_VG_ROOT``
does; they apply to the annotation files and to the leaderboard instance files alike) and
``skip_invalid`` (skip bad annotation records, counted on stderr, instead of refusing the
file). ``abduct eval TASK --dataset NAME,key=value`` names the task's dataset::

    abduct eval sherlock-comparison --model M --data D --dataset sherlock-comparison,vg_root=/data/VG

Other packages read Sherlock through the registry, never by importing this package::

    dataset = registry.create("dataset", "sherlock", settings)
    pairs = dataset.pairs(data_dir, "train")   # [GroundedText(id, visual, text, group)]
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from abduct import AbductError, GroundedText, Settings, Spec, TextPool
from abduct_sherlock.check import check_data
from abduct_sherlock.examples import (
    Clues,
    ComparisonExample,
    GenerationExample,
    LocalizationImage,
    comparison_examples,
    images_from_annotations,
    images_from_leaderboard,
    proposal_file,
    require_val,
    train_file,
)
from abduct_sherlock.layout import ImageRoots, annotation_file, leaderboard_files
from abduct_sherlock.loader import load_instances
from abduct_sherlock.records import SherlockInstance


class _SherlockFiles:
    """The options every Sherlock dataset shares, and what they change: where images are
    found and whether bad annotation records are skipped."""

    def __init__(self, *, vg_root: Path | None = None, vcr_root: Path | None = None, skip_invalid: bool = False) -> None:
        self.vg_root = vg_root
        self.vcr_root = vcr_root
        self.skip_invalid = skip_invalid

    def roots(self, data_dir: Path) -> ImageRoots:
        return ImageRoots.for_data_dir(Path(data_dir), self.vg_root, self.vcr_root)

    def instances(self, data_dir: Path, split: str) -> list[SherlockInstance]:
        return load_instances(Path(data_dir), split, skip_invalid=self.skip_invalid, vg_root=self.vg_root,
                              vcr_root=self.vcr_root)

    def clues(self, data_dir: Path, split: str) -> Clues:
        return Clues(annotation_file(Path(data_dir), split), self.instances(data_dir, split))

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir), self.vg_root, self.vcr_root)


class SherlockDataset(_SherlockFiles):
    """The released annotation files of a data directory (``layout.py``)."""

    def load(self, data_dir: Path, split: str) -> list[SherlockInstance]:
        return self.instances(data_dir, split)

    def files(self, data_dir: Path, split: str) -> list[Path]:
        return [annotation_file(Path(data_dir), split)]

    def pairs(self, data_dir: Path, split: str) -> list[GroundedText]:
        """One training pair per observation: the image with the clue's region and the clue as
        context, the inference as text; ``group`` is the retrieval chunk (validation only)."""
        return [
            GroundedText(inst.instance_id, inst.visual, inst.inference,
                         None if inst.split_idx is None else str(inst.split_idx))
            for inst in self.load(data_dir, split)
        ]


Source = Literal["auto", "leaderboard", "annotations"]
LOCALIZATION_SOURCES: tuple[str, ...] = ("auto", "leaderboard", "annotations")


class LocalizationDataset(_SherlockFiles):
    """The images of the localization task: the leaderboard files (``val_localization/``), or
    every box x every inference of each annotated image plus the auto-box proposals
    (``sherlock_val_autoboxes.json``, when present). ``source=auto`` takes the leaderboard
    files when both are there; both sources give the same rows and the same numbers."""

    def __init__(self, *, source: str = "auto", vg_root: Path | None = None, vcr_root: Path | None = None,
                 skip_invalid: bool = False) -> None:
        super().__init__(vg_root=vg_root, vcr_root=vcr_root, skip_invalid=skip_invalid)
        self.source = source

    def resolved_source(self, data_dir: Path, split: str) -> str:
        files = leaderboard_files(Path(data_dir), split, "localization")
        missing = [p for p in (files["instances"], files["answer_key"]) if not p.is_file()]
        if self.source == "auto":
            return "annotations" if missing else "leaderboard"
        if self.source == "leaderboard" and missing:
            raise AbductError(f"dataset sherlock-localization,source=leaderboard: {missing[0]} not found")
        return self.source

    def load(self, data_dir: Path, split: str) -> list[LocalizationImage]:
        require_val(split)
        if self.resolved_source(data_dir, split) == "leaderboard":
            files = leaderboard_files(Path(data_dir), split, "localization")
            return images_from_leaderboard(files["instances"], files["answer_key"], self.roots(data_dir),
                                           self.clues(data_dir, split))
        return images_from_annotations(self.instances(data_dir, split), proposal_file(Path(data_dir)))

    def files(self, data_dir: Path, split: str) -> list[Path]:
        annotations = annotation_file(Path(data_dir), split)
        if self.resolved_source(data_dir, split) == "leaderboard":
            files = leaderboard_files(Path(data_dir), split, "localization")
            return [files["instances"], files["answer_key"], annotations]
        proposals = proposal_file(Path(data_dir))
        return [annotations] + ([proposals] if proposals is not None else [])


class ComparisonDataset(_SherlockFiles):
    """The comparison sources of ``val_comparison/``, each candidate row with the source's clue."""

    def load(self, data_dir: Path, split: str) -> list[ComparisonExample]:
        require_val(split)
        files = leaderboard_files(Path(data_dir), split, "comparison")
        return comparison_examples(files["instances"], files["answer_key"], self.roots(data_dir),
                                   self.clues(data_dir, split))

    def files(self, data_dir: Path, split: str) -> list[Path]:
        files = leaderboard_files(Path(data_dir), split, "comparison")
        return [files["instances"], files["answer_key"], annotation_file(Path(data_dir), split)]


class GenerationDataset(_SherlockFiles):
    """The validation instances; the training file's inferences (when it is there) are the
    pool that generators choosing rather than writing pick from."""

    def load(self, data_dir: Path, split: str) -> list[GenerationExample]:
        require_val(split)
        pool = None
        if train_file(Path(data_dir)) is not None:
            pool = TextPool.of([inst.inference for inst in self.instances(data_dir, "train")])
        return [GenerationExample(inst, pool) for inst in self.instances(data_dir, split)]

    def files(self, data_dir: Path, split: str) -> list[Path]:
        train = train_file(Path(data_dir))
        return [annotation_file(Path(data_dir), split)] + ([train] if train is not None else [])


# -- factories (abduct's one shape: factory(spec, settings, *, options)) ----------------------
def make_dataset(
    spec: Spec, settings: Settings, *, vg_root: Path | None = None, vcr_root: Path | None = None,
    skip_invalid: bool = False,
) -> SherlockDataset:
    """``sherlock[,vg_root=PATH][,vcr_root=PATH][,skip_invalid=true]``."""
    return SherlockDataset(vg_root=vg_root, vcr_root=vcr_root, skip_invalid=skip_invalid)


def make_localization_dataset(
    spec: Spec, settings: Settings, *, source: Source = "auto", vg_root: Path | None = None,
    vcr_root: Path | None = None, skip_invalid: bool = False,
) -> LocalizationDataset:
    """``sherlock-localization[,source=auto|leaderboard|annotations][,vg_root=PATH][,vcr_root=PATH][,skip_invalid=true]``."""
    if source not in LOCALIZATION_SOURCES:
        raise AbductError(f"dataset sherlock-localization: source={source} is not one of {', '.join(LOCALIZATION_SOURCES)}")
    return LocalizationDataset(source=source, vg_root=vg_root, vcr_root=vcr_root, skip_invalid=skip_invalid)


def make_comparison_dataset(
    spec: Spec, settings: Settings, *, vg_root: Path | None = None, vcr_root: Path | None = None,
    skip_invalid: bool = False,
) -> ComparisonDataset:
    """``sherlock-comparison[,vg_root=PATH][,vcr_root=PATH][,skip_invalid=true]``."""
    return ComparisonDataset(vg_root=vg_root, vcr_root=vcr_root, skip_invalid=skip_invalid)


def make_generation_dataset(
    spec: Spec, settings: Settings, *, vg_root: Path | None = None, vcr_root: Path | None = None,
    skip_invalid: bool = False,
) -> GenerationDataset:
    """``sherlock-generation[,vg_root=PATH][,vcr_root=PATH][,skip_invalid=true]``."""
    return GenerationDataset(vg_root=vg_root, vcr_root=vcr_root, skip_invalid=skip_invalid)
