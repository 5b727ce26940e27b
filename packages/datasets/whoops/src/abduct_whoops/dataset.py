"""The datasets the WHOOPS! tasks read (abduct's Dataset protocol), with their options.

- ``whoops`` (captioning, matching, VQA, explanation): the release's images of the run's split
  (``all`` or ``fold<k>-<part>``, ``splits.py``), in release order, each a ``WhoopsExample``:
  the image, the fold whose test part holds it, and with a fold split the fold's training
  images, whose texts a generator that chooses is offered (they are not in the split);
- ``whoops-identification``: the authors' separate identification release (``normals.py``),
  each (weird, normal) pair of the split an ``IdentificationExample`` with the weird image's
  category and fold.

Options (``--dataset whoops,folds=FILE``, ``--dataset whoops-identification,normal_images=DIR,
counterpart=natural,folds=FILE``): ``folds`` a file written by ``abduct whoops folds`` (the
folds every split, pool and per-fold table then follows; default: the documented folds of the
data's ids); ``normal_images`` where the identification release is (default ``DATA/
identification/`` or ``DATA``); ``counterpart`` which picture is the weird one's counterpart
(``normal_image`` or ``natural_image``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from abduct import AbductError, GroundedText, Settings, Spec, VisualInput
from abduct_whoops.check import check_data
from abduct_whoops.loader import Release, load_release, release_files
from abduct_whoops.normals import IDENTIFICATION_FILES, Counterpart, Pair, find_file, load_pairs
from abduct_whoops.records import WhoopsImage
from abduct_whoops.splits import N_FOLDS, Folds, make_folds, parse_split, read_folds


@dataclass(frozen=True)
class WhoopsExample:
    """One image of a run's split."""

    image: WhoopsImage
    fold: int  # the fold whose test part holds the image
    training: tuple[WhoopsImage, ...] = ()  # with a fold split: that fold's training images, in the folds' order

    @property
    def id(self) -> str:
        return self.image.image_id


@dataclass(frozen=True)
class IdentificationExample:
    """One (weird, counterpart) pair of the identification release."""

    pair: Pair
    category: str  # the weird image's commonsense category; "unknown" when its name is not a WHOOPS! id
    fold: int | None  # the fold whose test part holds the weird image; None when it is not a WHOOPS! image
    counterpart: str  # the column of the counterpart picture: normal_image or natural_image
    file: str  # the identification CSV

    @property
    def id(self) -> str:
        return self.pair.pair_id


def _folds(release: Release, folds_file: Path | None) -> Folds:
    ids = [image.image_id for image in release.images]
    return read_folds(folds_file, ids) if folds_file is not None else make_folds(ids)


def _folds_problems(data_dir: Path, folds_file: Path | None) -> list[str]:
    """A given folds file that does not fit the release, as one problem."""
    if folds_file is None:
        return []
    try:
        release = load_release(data_dir)
    except AbductError:  # check_data reports it
        return []
    try:
        _folds(release, folds_file)
    except AbductError as exc:
        return [str(exc)]
    return []


def _test_fold(folds: Folds) -> dict[str, int]:
    return {image_id: k for k in range(N_FOLDS) for image_id in folds.part(k, "test")}


class WhoopsDataset:
    def __init__(self, folds: Path | None = None) -> None:
        self.folds = folds

    def load(self, data_dir: Path, split: str) -> list[WhoopsExample]:
        """The images of ``split`` (``all`` or ``fold<k>-<part>``), in release order."""
        release = load_release(Path(data_dir))
        chosen = parse_split(split)
        folds = _folds(release, self.folds)
        fold_of = _test_fold(folds)
        if chosen is None:
            return [WhoopsExample(image, fold_of[image.image_id]) for image in release.images]
        every = release.by_id()
        training = tuple(every[i] for i in folds.part(chosen[0], "train"))
        wanted = set(folds.part(*chosen))
        return [WhoopsExample(image, fold_of[image.image_id], training) for image in release.images
                if image.image_id in wanted]

    def files(self, data_dir: Path, split: str) -> list[Path]:
        """The release's annotation files, and the folds file when one is given."""
        return [*release_files(Path(data_dir)), *([self.folds] if self.folds is not None else [])]

    def pairs(self, data_dir: Path, split: str) -> list[GroundedText]:
        """(image, caption) training pairs, one per crowd caption, for ``abduct train clip
        --dataset whoops``: ``train`` and ``val`` are fold 0's parts (the supervised protocol's
        first fold), ``fold<k>-<part>`` any fold's; the image id is the group."""
        named = {"train": "fold0-train", "val": "fold0-val", "test": "fold0-test"}.get(split, split)
        return [GroundedText(f"{example.id}#{k}", VisualInput(example.image.path), caption, example.id)
                for example in self.load(data_dir, named) for k, caption in enumerate(example.image.crowd_captions)]

    def check(self, data_dir: Path) -> list[str]:
        """The release's problems and its pictures' (``abduct whoops check``), and the folds file's."""
        return [*check_data(Path(data_dir)), *_folds_problems(Path(data_dir), self.folds)]


class IdentificationDataset:
    def __init__(self, normal_images: Path | None = None, counterpart: Counterpart = "normal",
                 folds: Path | None = None) -> None:
        self.normal_images = normal_images
        self.counterpart: Counterpart = counterpart
        self.folds = folds

    def _file(self, data_dir: Path) -> Path:
        found = find_file(data_dir, self.normal_images)
        if found is None:
            raise _not_found(data_dir)
        return found

    def load(self, data_dir: Path, split: str) -> list[IdentificationExample]:
        """The pairs of the release in file order; with a fold split those whose weird image is
        in that part."""
        data_dir = Path(data_dir)
        release = load_release(data_dir)
        chosen = parse_split(split)
        folds = _folds(release, self.folds)
        file = self._file(data_dir)
        pairs = load_pairs(file, self.counterpart)
        if chosen is not None:
            wanted = set(folds.part(*chosen))
            pairs = [p for p in pairs if p.image_id in wanted]
        category = {image.image_id: image.commonsense_category for image in release.images}
        fold_of = _test_fold(folds)
        return [IdentificationExample(p, category.get(p.image_id, "unknown"), fold_of.get(p.image_id),
                                      f"{self.counterpart}_image", str(file)) for p in pairs]

    def files(self, data_dir: Path, split: str) -> list[Path]:
        """The release's annotation files, the identification CSV, and the folds file when given."""
        data_dir = Path(data_dir)
        return [*release_files(data_dir), self._file(data_dir), *([self.folds] if self.folds is not None else [])]

    def check(self, data_dir: Path) -> list[str]:
        """The release's problems and its pictures', then the identification pictures'; the
        identification release itself missing is one."""
        problems = [*check_data(Path(data_dir), self.normal_images), *_folds_problems(Path(data_dir), self.folds)]
        try:
            missing = find_file(Path(data_dir), self.normal_images) is None
        except AbductError:  # a given normal_images that is not there: check_data said so
            missing = False
        return [*problems, str(_not_found(Path(data_dir)))] if missing else problems


def _not_found(data_dir: Path) -> AbductError:
    return AbductError(
        "whoops-identification needs the normal counterparts of the images, from the authors' separate "
        f"identification release ({IDENTIFICATION_FILES[0]} and its pictures), which is not in "
        f"{data_dir} or {data_dir / 'identification'}: give it with --dataset whoops-identification,normal_images=DIR")


def make_dataset(spec: Spec, settings: Settings, *, folds: Path | None = None) -> WhoopsDataset:
    """``whoops[,folds=FILE]`` (``folds``: a file written by ``abduct whoops folds``)."""
    return WhoopsDataset(folds)


def make_identification_dataset(spec: Spec, settings: Settings, *, normal_images: Path | None = None,
                                counterpart: Literal["normal", "natural"] = "normal",
                                folds: Path | None = None) -> IdentificationDataset:
    """``whoops-identification[,normal_images=DIR][,counterpart=normal|natural][,folds=FILE]``."""
    return IdentificationDataset(normal_images, counterpart, folds)
