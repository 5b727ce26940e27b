"""The datasets ``nycc-matching``, ``nycc-ranking`` and ``nycc-explanation`` (abduct's Dataset
protocol), one per task: each reads that task's configs (``layout.py``).

Splits: ``test`` = the test splits of the five folds together (disjoint), each item tagged with
its fold — what ``fold=all`` scores; ``fold<k>-<part>`` (``part`` = ``train``, ``validation``,
``test``) one fold's split; ``leaderboard`` (matching, ranking) the public leaderboard set
(``instances.json``, no labels). Options: ``configs=description|pixels`` — which configs are
read (default ``description``, the ones the official scorer reads; they carry the cartoon as
well as the annotations); ``leaderboard=DIR`` the unzipped ``<task>_test_set_public`` folder
(default ``DATA/<task>_test_set_public``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from abduct import AbductError, Settings, Spec
from abduct_nycc.layout import SPLITS, config_name, repo_root, split_files
from abduct_nycc.loader import leaderboard_items, parse_rows, read_rows
from abduct_nycc.records import N_FOLDS, NyccItem

Configs = Literal["description", "pixels"]
_FOLD_SPLIT = re.compile(r"^fold([0-4])-(train|validation|test)$")


def parse_split(split: str) -> list[tuple[int, str]] | None:
    """``[(fold, part), ...]`` a split names; None for ``leaderboard``; a bad name is one line."""
    if split == "test":
        return [(k, "test") for k in range(N_FOLDS)]
    if split == "leaderboard":
        return None
    match = _FOLD_SPLIT.match(split)
    if match is None:
        raise AbductError(f"NYCC split must be test (all five folds), fold<0-4>-<{'|'.join(SPLITS)}> or leaderboard, "
                          f"not '{split}'")
    return [(int(match.group(1)), match.group(2))]


class NyccDataset:
    def __init__(self, task: str, configs: Configs = "description", leaderboard: Path | None = None) -> None:
        if configs not in ("description", "pixels"):
            raise AbductError(f"configs must be description or pixels, not {configs!r}")
        self.task = task
        self.configs: Configs = configs
        self.leaderboard = leaderboard

    def _leaderboard_dir(self, data_dir: Path) -> Path:
        return Path(self.leaderboard) if self.leaderboard is not None else Path(data_dir) / f"{self.task}_test_set_public"

    def _files(self, data_dir: Path, fold: int, part: str) -> list[Path]:
        return split_files(repo_root(Path(data_dir)), config_name(self.task, fold, self.configs), part)

    def load(self, data_dir: Path, split: str, pictures: bool = True) -> list[NyccItem]:
        parts = parse_split(split)
        if parts is None:
            return leaderboard_items(self._leaderboard_dir(data_dir), self.task)
        items: list[NyccItem] = []
        for fold, part in parts:
            items += parse_rows(read_rows(self._files(data_dir, fold, part)), self.task, self.configs, fold, pictures)
        return items

    def files(self, data_dir: Path, split: str) -> list[Path]:
        """What results.json hashes: the parquet files read (or ``instances.json``)."""
        parts = parse_split(split)
        if parts is None:
            return [self._leaderboard_dir(data_dir) / "instances.json"]
        return [f for fold, part in parts for f in self._files(data_dir, fold, part)]

    def check(self, data_dir: Path) -> list[str]:
        """One line per fold whose test split does not load (``abduct check nycc-...``)."""
        problems = []
        for fold in range(N_FOLDS):
            try:
                self.load(data_dir, f"fold{fold}-test", pictures=False)
            except AbductError as exc:
                problems.append(f"fold {fold}: {exc}")
        return problems


def make_matching(spec: Spec, settings: Settings, *, configs: Configs = "description",
                  leaderboard: Path | None = None) -> NyccDataset:
    """``nycc-matching[,configs=description|pixels][,leaderboard=DIR]``."""
    return NyccDataset("matching", configs, leaderboard)


def make_ranking(spec: Spec, settings: Settings, *, configs: Configs = "description",
                 leaderboard: Path | None = None) -> NyccDataset:
    """``nycc-ranking[,configs=description|pixels][,leaderboard=DIR]``."""
    return NyccDataset("ranking", configs, leaderboard)


def make_explanation(spec: Spec, settings: Settings, *, configs: Configs = "description") -> NyccDataset:
    """``nycc-explanation[,configs=description|pixels]``."""
    return NyccDataset("explanation", configs)
