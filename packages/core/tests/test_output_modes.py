"""Outputs honour the umask: colleagues on a shared machine can read them (issue: every output
was 0600 because the atomic write's temporary file is created by mkstemp)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct._cli import main
from abduct._registry.registry import Registry
from abduct.kit.io import atomic_write_bytes, atomic_write_json, current_umask


@pytest.fixture(params=[0o022, 0o027, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*") if p.is_file()}


def test_current_umask_reads_without_changing_it(umask: int) -> None:
    assert current_umask() == umask
    assert current_umask() == umask


def test_atomic_writes_get_the_mode_open_would_give(umask: int, tmp_path: Path) -> None:
    atomic_write_bytes(tmp_path / "a.bin", b"x")
    atomic_write_json(tmp_path / "sub" / "b.json", {"k": 1})
    with open(tmp_path / "plain", "w"):
        pass
    expected = stat.S_IMODE((tmp_path / "plain").stat().st_mode)
    assert expected == 0o666 & ~umask
    assert modes(tmp_path) == {"a.bin": expected, "sub/b.json": expected, "plain": expected}


def test_a_replaced_file_gets_the_umask_mode_too(tmp_path: Path) -> None:
    previous = os.umask(0o077)
    try:
        atomic_write_bytes(tmp_path / "f", b"old")
    finally:
        os.umask(previous)
    os.umask(0o022)
    try:
        atomic_write_bytes(tmp_path / "f", b"new")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == 0o644


def test_every_output_of_a_run_and_its_caches(umask: int, toy_registry: Registry, toy_data: Path,
                                              tmp_path: Path) -> None:
    out, cache = tmp_path / "run", tmp_path / "cache"
    assert main(["eval", "toy-choice", "--model", "random", "--data", str(toy_data), "--out", str(out),
                 "--cache-dir", str(cache), "--quiet"]) == 0
    assert main(["eval", "toy-describe", "--model", "random", "--data", str(toy_data), "--out", str(tmp_path / "gen"),
                 "--cache-dir", str(cache), "--quiet"]) == 0
    written = {**modes(out), **{f"gen/{k}": v for k, v in modes(tmp_path / "gen").items()}}
    assert {"results.json", "predictions.jsonl", "report.md"} <= set(written)
    cached = modes(cache)
    assert cached, "the runs wrote cache shards"
    assert set(written.values()) | set(cached.values()) == {0o666 & ~umask}
