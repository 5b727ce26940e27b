"""Runs at the same time: two evaluations sharing one cache, and two merges into one folder, each
equal a clean run. The processes start together (a barrier), so their writes interleave."""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from abduct._cli import main
from abduct._registry.registry import Registry, build_registry, reset_registry
from test_cache_damage import _Counting
from test_shards import CustomPlugin, _same_run
from toy_plugin import ToyPlugin, write_toy_data

FORK = multiprocessing.get_context("fork")  # the children inherit the registry with the toy plugin


@pytest.fixture
def registry() -> Iterator[Registry]:
    built = build_registry(extra_plugins=[("toy", ToyPlugin()), ("custom", CustomPlugin()), ("counting", _Counting())])
    reset_registry(built)
    yield built
    reset_registry()


def _main_after(barrier: Any, argv: list[str], codes: Any, slot: int) -> None:
    barrier.wait()
    codes[slot] = main(argv)


def _together(*argvs: list[str]) -> list[int]:
    """Run ``abduct ARGV`` for each argv in its own process, all released at once; the exit codes."""
    barrier, codes = FORK.Barrier(len(argvs)), FORK.Array("i", [-1] * len(argvs))
    children = [FORK.Process(target=_main_after, args=(barrier, argv, codes, i)) for i, argv in enumerate(argvs)]
    for child in children:
        child.start()
    for child in children:
        child.join(120)
    assert all(child.exitcode == 0 for child in children), [child.exitcode for child in children]
    return list(codes)


def _outputs(run: Path) -> tuple[Any, str]:
    return json.loads((run / "results.json").read_text())["metrics"], (run / "predictions.jsonl").read_text()


@pytest.mark.parametrize("task", ["toy-choice", "toy-describe"])  # the embedding cache; the generation cache
def test_two_evals_sharing_a_cache_equal_a_clean_run(registry: Registry, tmp_path: Path, task: str) -> None:
    data, cache = write_toy_data(tmp_path / "data", items=200), tmp_path / "cache"
    model = "counting" if task == "toy-choice" else "random"

    def argv(out: str, *cached: str) -> list[str]:
        return ["eval", task, "--model", model, "--data", str(data), "--out", str(tmp_path / out), "--quiet", *cached]

    assert main(argv("clean", "--no-cache")) == 0
    assert _together(argv("first", "--cache-dir", str(cache)), argv("second", "--cache-dir", str(cache))) == [0, 0]
    assert len(list(cache.rglob("shard-*"))) >= 2  # both wrote their entries
    assert main(argv("from-both", "--cache-dir", str(cache))) == 0  # reads both processes' shards
    clean = _outputs(tmp_path / "clean")
    assert all(_outputs(tmp_path / out) == clean for out in ("first", "second", "from-both"))


def test_two_merges_into_one_folder_leave_one_whole_run(registry: Registry, tmp_path: Path,
                                                        capfd: pytest.CaptureFixture[str]) -> None:
    data = write_toy_data(tmp_path / "data", items=200)
    common = ["--model", "random", "--data", str(data), "--quiet", "--no-cache"]
    assert main(["eval", "toy-choice", *common, "--out", str(tmp_path / "one")]) == 0
    shards = [str(tmp_path / f"shard-{i}") for i in range(2)]
    for i, out in enumerate(shards):
        assert main(["eval", "toy-choice", *common, "--out", out, "--shard", f"{i}/2"]) == 0
    capfd.readouterr()
    merged = tmp_path / "merged"
    codes = _together(["merge", str(merged), *shards, "--quiet"], ["merge", str(merged), *shards, "--quiet"])
    err = capfd.readouterr().err
    # each merge either made the run or was refused in one line by the other's lock
    assert 0 in codes and set(codes) <= {0, 2}, (codes, err)
    assert err.count("error:") == codes.count(2) and all("another abduct run" in line
                                                         for line in err.splitlines() if line.startswith("error:"))
    _same_run(tmp_path / "one", merged)
    assert not [p.name for p in merged.iterdir() if p.name.startswith(".abduct-")]  # no staging left
