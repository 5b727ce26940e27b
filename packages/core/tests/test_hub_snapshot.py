"""``abduct.kit.io.hub_snapshot``: the snapshot of a hub-cache dataset folder that a reader uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from abduct.contract.errors import AbductError
from abduct.kit.io import hub_snapshot


def _snapshots(repo: Path, *commits: str) -> None:
    for commit in commits:
        (repo / "snapshots" / commit).mkdir(parents=True)


def test_refs_main_names_the_snapshot_among_several(tmp_path: Path) -> None:
    _snapshots(tmp_path, "aaa", "bbb")
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "main").write_text("bbb\n")
    assert hub_snapshot(tmp_path) == tmp_path / "snapshots" / "bbb"


def test_the_only_snapshot_that_holds_the_files_is_taken_else_none(tmp_path: Path) -> None:
    assert hub_snapshot(tmp_path) is None  # not a cache folder
    _snapshots(tmp_path, "aaa", "bbb")
    (tmp_path / "snapshots" / "bbb" / "data.csv").write_text("x\n")
    assert hub_snapshot(tmp_path, lambda p: (p / "data.csv").is_file()) == tmp_path / "snapshots" / "bbb"
    assert hub_snapshot(tmp_path, lambda p: False) is None


def test_several_candidates_without_refs_main_is_one_line_naming_them(tmp_path: Path) -> None:
    _snapshots(tmp_path, "aaa", "bbb")
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "main").write_text("gone")  # names a snapshot that is not there
    with pytest.raises(AbductError, match=r"several snapshots \(aaa, bbb\) and no refs/main") as caught:
        hub_snapshot(tmp_path)
    assert "\n" not in str(caught.value)
