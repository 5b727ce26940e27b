"""What each Sherlock task evaluates, as its dataset loads it (``dataset.py``): the examples.

- retrieval: the validation annotation file's ``SherlockInstance``s (grouped by ``split_idx``);
- localization: ``LocalizationImage``s, one per image, from the leaderboard files
  (``val_localization/``) or from the annotation file and the auto-box proposals;
- comparison: ``ComparisonExample``s, one per annotated source of ``val_comparison/``;
- generation: ``GenerationExample``s, one per validation instance, sharing the training
  split's inferences as the pool of texts a choosing generator picks from.

Every input is the image, the clue's region and the clue as context (``SherlockInstance.visual``).
The leaderboard instance files carry no clue, so their rows are joined to the validation
annotation file by instance id: a comparison row gets the clue of its source (``Input_iid``),
a GT localization row the clue of the instance whose box it is. Auto-box rows are detector
proposals, which no annotator described: they have no clue (no context). An instance id
missing from the annotation file is an error (one line), never a silent input without a clue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from abduct import AbductError, Region, TextPool, VisualInput
from abduct_sherlock.build import group_by_image, region_iou
from abduct_sherlock.keys import AutoImage, ComparisonKey, ComparisonSource, GTImage, LocalizationKey
from abduct_sherlock.layout import AUTOBOX_FILE, ImageRoots, annotation_file
from abduct_sherlock.leaderboard import LeaderboardRow, read_instances
from abduct_sherlock.records import SherlockInstance


def require_val(split: str) -> None:
    """The tasks evaluate the validation split: its answer keys are public."""
    if split != "val":
        raise AbductError(f"Sherlock tasks evaluate the validation split (public answer keys), not '{split}'")


class Clues:
    """The clue of each instance of a split's annotation file, for joining leaderboard rows."""

    def __init__(self, file: Path, instances: Sequence[SherlockInstance]) -> None:
        self.file = file
        self.by_id = {inst.instance_id: inst.clue for inst in instances}

    def of(self, instance_id: str, source: Path) -> str:
        clue = self.by_id.get(instance_id)
        if clue is None:
            raise AbductError(f"{source}: instance {instance_id} is not in {self.file.name}, "
                              "so its clue (the model's context) cannot be found")
        return clue

    def visual(self, visual: VisualInput, instance_id: str, source: Path) -> VisualInput:
        """``visual`` with the clue of ``instance_id`` as its context."""
        return replace(visual, context=self.of(instance_id, source))


def _rows(path: Path, roots: ImageRoots) -> dict[str, LeaderboardRow]:
    return {r.test_id: r for r in read_instances(path, roots)}


def _row(rows: dict[str, LeaderboardRow], tid: str, path: Path) -> LeaderboardRow:
    if tid not in rows:
        raise AbductError(f"{path}: test id {tid} of the answer key has no instance row")
    return rows[tid]


# -- localization ---------------------------------------------------------------------------
@dataclass
class LocalizationImage:
    """One image's GT and auto-box rows to score (``ids``, ``visuals``, ``texts`` in step),
    with how to read the accuracies off them; ``source`` is where they were read
    (``leaderboard`` or ``annotations``)."""

    image: str
    source: str
    visuals: list[VisualInput] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    gt: GTImage | None = None
    auto: AutoImage | None = None

    @property
    def id(self) -> str:
        return self.image

    def add(self, tid: str, visual: VisualInput, text: str) -> None:
        self.ids.append(tid)
        self.visuals.append(visual)
        self.texts.append(text)


def images_from_leaderboard(instances_file: Path, answer_key: Path, roots: ImageRoots,
                            clues: Clues) -> list[LocalizationImage]:
    """GT rows get the clue of the instance whose box they show (``inst_id`` of the key's
    correct row for that ``bbox_idx``); auto rows (proposals) get none."""
    key = LocalizationKey.read(answer_key)
    rows = _rows(instances_file, roots)
    images: dict[str, LocalizationImage] = {}

    def image(name: str) -> LocalizationImage:
        return images.setdefault(name, LocalizationImage(name, "leaderboard"))

    for g in key.gt:
        u = image(g.image)
        u.gt = g
        for tid, (box, _) in g.cells.items():
            r = _row(rows, tid, instances_file)
            u.add(tid, clues.visual(r.visual, g.box_owners[box], answer_key), r.inference)
    for a in key.auto:
        u = image(a.image)
        u.auto = a
        for entries in a.inferences.values():
            for tid, _ in entries:
                r = _row(rows, tid, instances_file)
                u.add(tid, r.visual, r.inference)
    return list(images.values())


def images_from_annotations(instances: Sequence[SherlockInstance], proposal_file: Path | None) -> list[LocalizationImage]:
    """GT rows from the annotation file (every box x every inference of an image) and, with a
    proposals file (``sherlock_val_autoboxes.json``), auto rows (every proposal x every inference)."""
    from abduct_sherlock.proposals import read_proposals

    proposals = read_proposals(proposal_file) if proposal_file is not None else {}
    images = []
    for url, group in group_by_image(instances).items():
        u = LocalizationImage(url, "annotations")
        u.gt = GTImage(url, len(group), box_owners={i: inst.instance_id for i, inst in enumerate(group)})
        for i, box_owner in enumerate(group):
            for j, inf_owner in enumerate(group):
                tid = f"gt/{i}/{j}"
                u.gt.cells[tid] = (i, j)
                u.add(tid, box_owner.visual, inf_owner.inference)
        if proposals.get(url):
            u.auto = AutoImage(url)
            for j, inf_owner in enumerate(group):
                entries = u.auto.inferences.setdefault(inf_owner.instance_id, [])
                for p, box in enumerate(proposals[url]):
                    tid = f"auto/{p}/{j}"
                    entries.append((tid, region_iou(box, inf_owner.region)))
                    u.add(tid, VisualInput(inf_owner.image_path, Region((box,))), inf_owner.inference)
        images.append(u)
    return images


def proposal_file(data_dir: Path) -> Path | None:
    path = Path(data_dir) / AUTOBOX_FILE
    return path if path.is_file() else None


# -- comparison -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ComparisonExample:
    """One annotated source: its candidates (``source.candidates``: test id and the two
    annotators' ratings), each candidate's row showing the source's image and region with
    the source's clue as context, and that clue."""

    source: ComparisonSource
    rows: dict[str, LeaderboardRow]
    clue: str

    @property
    def id(self) -> str:
        return self.source.input_iid

    @property
    def candidates(self) -> list[LeaderboardRow]:
        return [self.rows[tid] for tid, _, _ in self.source.candidates]


def comparison_examples(instances_file: Path, answer_key: Path, roots: ImageRoots,
                        clues: Clues) -> list[ComparisonExample]:
    key = ComparisonKey.read(answer_key)
    read = _rows(instances_file, roots)
    out = []
    for source in key.sources:
        rows = {}
        for tid, _, _ in source.candidates:
            r = _row(read, tid, instances_file)
            rows[tid] = replace(r, visual=clues.visual(r.visual, source.input_iid, answer_key))
        out.append(ComparisonExample(source, rows, clues.by_id.get(source.input_iid, "")))
    return out


# -- generation -----------------------------------------------------------------------------
@dataclass(frozen=True)
class GenerationExample:
    """One validation instance whose inference a generator writes; ``pool`` (the same object
    for every example of a split) holds the training split's inferences, which generators
    that choose rather than write pick from (None without a training annotation file)."""

    instance: SherlockInstance
    pool: TextPool | None = None

    @property
    def id(self) -> str:
        return self.instance.instance_id


def train_file(data_dir: Path) -> Path | None:
    """The training annotation file, when the data directory has one."""
    try:
        return annotation_file(data_dir, "train")
    except AbductError:
        return None
