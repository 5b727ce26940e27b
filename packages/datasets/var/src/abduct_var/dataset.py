"""The ``var`` dataset (abduct's Dataset protocol): what the three VAR tasks read.

``load(DATA, split)`` gives the split's examples (``loader``) with every event's video resolved
to an absolute path (``<videos>/<video_id>.mp4|mkv|webm``, the first that exists) and, shared
by all of them, the pool of sentences a choosing generator picks from: the training split's,
or the evaluated split's own when there is no training file (or the split is ``train``).
``files`` is the split's annotation file (hashed into results.json); ``check`` the schema and
the videos.

Option (``--dataset var,videos=DIR``): ``videos``, the video folder (default ``DATA/videos``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from abduct import AbductError, Settings, Spec
from abduct.kit import require_dir
from abduct_var.check import check_data
from abduct_var.inputs import video_path
from abduct_var.loader import annotation_file, load_file, load_split
from abduct_var.records import SentencePool, VarExample


def sentence_pool(data_dir: Path, split: str, evaluated: Sequence[VarExample]) -> SentencePool:
    """The training split's counted sentences when a training file exists (else ``evaluated``'s)."""
    source: Sequence[VarExample] = evaluated
    name = split
    if split != "train":
        try:
            source, name = load_file(annotation_file(data_dir, "train")), "train"
        except AbductError:
            pass
    return SentencePool(name, tuple(e.sentence.strip() for x in source for e in x.counted))


class VarDataset:
    def __init__(self, videos: Path | None = None) -> None:
        self.videos = videos

    def video_dir(self, data_dir: Path) -> Path:
        if self.videos is None:
            return Path(data_dir) / "videos"
        return require_dir(Path(self.videos), "VAR video directory (--dataset var,videos=DIR)")

    def load(self, data_dir: Path, split: str) -> list[VarExample]:
        examples, _ = load_split(Path(data_dir), split)
        videos = self.video_dir(data_dir).absolute()
        pool = sentence_pool(Path(data_dir), split, examples)
        paths: dict[str, str] = {}

        def resolved(x: VarExample) -> VarExample:
            events = tuple(replace(e, path=paths.get(e.video_id) or paths.setdefault(
                e.video_id, str(video_path(videos, e.video_id)))) for e in x.events)
            return replace(x, events=events, pool=pool)

        return [resolved(x) for x in examples]

    def files(self, data_dir: Path, split: str) -> list[Path]:
        return [annotation_file(Path(data_dir), split)]

    def check(self, data_dir: Path) -> list[str]:
        return check_data(Path(data_dir), self.videos)


def make_dataset(spec: Spec, settings: Settings, *, videos: Path | None = None) -> VarDataset:
    """``var[,videos=DIR]``: the videos' folder, when not ``DATA/videos``."""
    return VarDataset(videos)
