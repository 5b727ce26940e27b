"""The three registered datasets, one per Hugging Face repo: ``blackswan-mcq``, ``blackswan-yn``
and ``blackswan-gen`` (abduct's Dataset protocol).

``load(DIR, split)`` reads the repo's question file of ``split`` (``validation`` or ``test``;
``layout.py`` finds the folder and the file) into validated questions (``loader.py``), each
clip resolved to an absolute path; ``files`` is that question file (hashed into results.json);
``check`` lists what is wrong with both splits' files and the clips they name, without running
a model. A task names the dataset of its repo, so each reads only its own folder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from abduct import AbductError, Settings, Spec
from abduct_blackswan.layout import SPLITS, repo_dir, split_file
from abduct_blackswan.loader import load_gen, load_mcq, load_yn

Loader = Callable[[Path, Path, str], Sequence[Any]]


class BlackSwanRepo:
    """The questions of one repo (``variant``: MCQ, YN or Gen)."""

    def __init__(self, variant: str, loader: Loader) -> None:
        self.variant = variant
        self.loader = loader

    def file(self, data_dir: Path, split: str) -> tuple[Path, Path]:
        """The repo's folder and the question file of ``split``."""
        folder = repo_dir(Path(data_dir), self.variant)
        return folder, split_file(folder, self.variant, split)

    def load(self, data_dir: Path, split: str) -> list[Any]:
        folder, file = self.file(data_dir, split)
        return list(self.loader(file, folder, split))

    def files(self, data_dir: Path, split: str) -> list[Path]:
        return [self.file(data_dir, split)[1]]

    def check(self, data_dir: Path) -> list[str]:
        return check_repo(self, Path(data_dir))


def check_repo(repo: BlackSwanRepo, data_dir: Path) -> list[str]:
    """Both splits' files read as ``load`` reads them, then every clip they name looked for
    (each missing one listed once, with how many questions need it). Decoding is not tried here:
    the frame sampler names a corrupt clip when a model reads it."""
    try:
        repo_dir(data_dir, repo.variant)
    except AbductError as exc:  # no repo at all: its one line, with the download command
        return [str(exc)]
    problems: list[str] = []
    needed: dict[str, tuple[str, int]] = {}
    for split in SPLITS:
        try:
            questions = repo.load(data_dir, split)
        except AbductError as exc:  # a missing or unreadable split file, an invalid record
            problems.append(str(exc))
            continue
        for q in questions:
            for path in q.clips.given():
                file, count = needed.get(path, (q.file, 0))
                needed[path] = (file, count + 1)
    for path, (file, count) in needed.items():
        if not Path(path).is_file():
            problems.append(f"{file}: clip {path} not found ({count} question{'s' if count > 1 else ''})")
    return problems


def make_mcq_dataset(spec: Spec, settings: Settings) -> BlackSwanRepo:
    """``blackswan-mcq``: ``DIR/MCQ`` (UBC-ViL/BlackSwanSuite-MCQ)."""
    return BlackSwanRepo("MCQ", load_mcq)


def make_yn_dataset(spec: Spec, settings: Settings) -> BlackSwanRepo:
    """``blackswan-yn``: ``DIR/YN`` (UBC-ViL/BlackSwanSuite-YN)."""
    return BlackSwanRepo("YN", load_yn)


def make_gen_dataset(spec: Spec, settings: Settings) -> BlackSwanRepo:
    """``blackswan-gen``: ``DIR/Gen`` (UBC-ViL/BlackSwanSuite-Gen)."""
    return BlackSwanRepo("Gen", load_gen)


def check_all(data_dir: Path) -> list[str]:
    """``abduct blackswan check``: the three repos."""
    return [p for repo in (make_mcq_dataset(Spec("blackswan-mcq"), Settings()),
                           make_yn_dataset(Spec("blackswan-yn"), Settings()),
                           make_gen_dataset(Spec("blackswan-gen"), Settings())) for p in check_repo(repo, data_dir)]
