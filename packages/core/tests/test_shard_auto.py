"""``abduct eval ... --shard auto [--shards N]``: the shard from a Slurm array task, a Kubernetes
Indexed Job or RANK/WORLD_SIZE; the ambiguous environments refused in one line, exit 2; a shard
so named is the same shard as ``--shard I/N`` (records and manifest), merges with shards of any
source, and says where it came from (shard.json, the merged results.json, the eval's line)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from abduct._cli import main
from abduct._registry.registry import Registry, build_registry, reset_registry
from abduct._run.shards import RECORDS_FILE, SHARD_FILE, Shard, from_environment
from toy_plugin import ToyPlugin, write_toy_data

# what slurmctld sets in each task (src/slurmctld/job_mgr.c, _create_job_array): COUNT is the
# number of indices, MIN/MAX the lowest/highest, STEP the ":S" of --array (1 without one)
SLURM_0_2 = {"SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "2",
             "SLURM_ARRAY_TASK_STEP": "1"}  # --array=0-2
SLURM_STEP = {"SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "4",
              "SLURM_ARRAY_TASK_STEP": "2"}  # --array=0-4:2
SLURM_LIST = {"SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "4",
              "SLURM_ARRAY_TASK_STEP": "1"}  # --array=0,2,4
SLURM_FROM_1 = {"SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "3",
                "SLURM_ARRAY_TASK_STEP": "1"}  # --array=1-3
READ = ("SLURM_ARRAY_TASK_ID", *SLURM_0_2, "JOB_COMPLETION_INDEX", "RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID")


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    for name in READ:  # whatever runs the tests (a Slurm job, torchrun) names no shard here
        monkeypatch.delenv(name, raising=False)
    registry = build_registry(extra_plugins=[("toy", ToyPlugin())])
    reset_registry(registry)
    yield registry
    reset_registry()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_toy_data(tmp_path / "data", items=24)


def _eval(data: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", "toy-choice", "--model", "random", "--data", str(data), "--out", str(out), "--no-cache", *extra]


def _setenv(monkeypatch: pytest.MonkeyPatch, env: Mapping[str, str]) -> None:
    for name in READ:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("env, shards, expected", [
    ({"SLURM_ARRAY_TASK_ID": "1", **SLURM_0_2}, None, (1, 3, "SLURM_ARRAY_TASK_ID")),
    ({"SLURM_ARRAY_TASK_ID": "2", **SLURM_0_2}, 3, (2, 3, "SLURM_ARRAY_TASK_ID")),  # --shards confirms
    ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "2"}, None, (0, 2, "SLURM_ARRAY_TASK_ID")),
    ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "3"}, None,
     (1, 4, "SLURM_ARRAY_TASK_ID")),  # MIN/MAX without COUNT
    ({"SLURM_ARRAY_TASK_ID": "1"}, 2, (1, 2, "SLURM_ARRAY_TASK_ID")),  # only the index: --shards counts
    ({"JOB_COMPLETION_INDEX": "3"}, 4, (3, 4, "JOB_COMPLETION_INDEX")),
    ({"RANK": "2", "WORLD_SIZE": "3"}, None, (2, 3, "RANK")),
    ({"RANK": "0"}, 2, (0, 2, "RANK")),
    # two sources that agree: the same index, and the same count where both give one
    ({"SLURM_ARRAY_TASK_ID": "1", **SLURM_0_2, "JOB_COMPLETION_INDEX": "1"}, None,
     (1, 3, "SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX")),
    ({"JOB_COMPLETION_INDEX": "1", "RANK": "1", "WORLD_SIZE": "2"}, 2, (1, 2, "JOB_COMPLETION_INDEX and RANK")),
])
def test_each_environment_names_the_shard(env: dict[str, str], shards: int | None,
                                          expected: tuple[int, int, str]) -> None:
    shard = from_environment(env, shards)
    assert (shard.index, shard.count, shard.source) == expected
    assert shard == Shard(expected[0], expected[1])  # the same shard as --shard I/N, whatever its source
    assert shard.from_ranks == ("RANK" in expected[2])


@pytest.mark.parametrize("env, extra, message", [
    ({}, [], "none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, RANK is set"),
    ({"SLURM_ARRAY_TASK_ID": "1", **SLURM_0_2, "JOB_COMPLETION_INDEX": "2"}, [],
     "names two shards (SLURM_ARRAY_TASK_ID says shard 1 of 3, JOB_COMPLETION_INDEX says shard 2)"),
    ({"SLURM_ARRAY_TASK_ID": "1", **SLURM_0_2, "RANK": "1", "WORLD_SIZE": "2"}, [],
     "names two shards (SLURM_ARRAY_TASK_ID says shard 1 of 3, RANK says shard 1 of 2)"),
    ({"SLURM_ARRAY_TASK_ID": "2", **SLURM_STEP}, [], "has a step of 2 (SLURM_ARRAY_TASK_STEP)"),
    ({"SLURM_ARRAY_TASK_ID": "2", **SLURM_LIST}, [], "has gaps (3 tasks, SLURM_ARRAY_TASK_COUNT, up to index 4"),
    ({"SLURM_ARRAY_TASK_ID": "1", **SLURM_FROM_1}, [], "starts at 1 (SLURM_ARRAY_TASK_MIN)"),
    ({"SLURM_ARRAY_TASK_ID": "1", **SLURM_0_2}, ["--shards", "4"],
     "--shards 4 disagrees with the environment: SLURM_ARRAY_TASK_ID says shard 1 of 3"),
    ({"RANK": "1", "WORLD_SIZE": "2"}, ["--shards", "3"], "--shards 3 disagrees with the environment"),
    ({"JOB_COMPLETION_INDEX": "1"}, [], "JOB_COMPLETION_INDEX names the shard but not how many there are: add --shards"),
    ({"JOB_COMPLETION_INDEX": "3"}, ["--shards", "3"], "JOB_COMPLETION_INDEX says shard 3, outside shards 0 to 2"),
    ({"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "3"}, [], "says shard 5, outside shards 0 to 2 of 3"),
    ({"RANK": "one", "WORLD_SIZE": "2"}, [], "RANK='one' is not a whole number"),
    ({"RANK": "0", "WORLD_SIZE": "0"}, [], "WORLD_SIZE=0; the number of shards must be at least 1"),
    ({"RANK": "1", "WORLD_SIZE": "2", "TORCHELASTIC_RUN_ID": "none"}, [], "RANK was set by torchrun"),
])
def test_ambiguous_environments_are_one_line_and_exit_2(registry: Registry, data: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                                                        extra: list[str], message: str) -> None:
    _setenv(monkeypatch, env)
    assert main(_eval(data, tmp_path / "o", "--shard", "auto", *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("extra, message", [
    (["--shards", "2"], "--shards 2 goes with --shard auto"),
    (["--shard", "0/2", "--shards", "2"], "--shards 2 goes with --shard auto (--shard 0/2 already says 2)"),
])
def test_shards_without_shard_auto_is_refused(registry: Registry, data: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str], extra: list[str],
                                              message: str) -> None:
    assert main(_eval(data, tmp_path / "o", *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and not (tmp_path / "o").exists()


def _manifest(folder: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((folder / SHARD_FILE).read_text())
    for key in ("created", "timings"):
        manifest.pop(key)
    return manifest


ENVIRONMENTS = {  # shard i of 2 as each engine names it, with the --shards it needs
    "SLURM_ARRAY_TASK_ID": (lambda i: {"SLURM_ARRAY_TASK_ID": str(i), "SLURM_ARRAY_TASK_COUNT": "2",
                                       "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "1",
                                       "SLURM_ARRAY_TASK_STEP": "1"}, []),
    "JOB_COMPLETION_INDEX": (lambda i: {"JOB_COMPLETION_INDEX": str(i)}, ["--shards", "2"]),
    # WORLD_SIZE 2 is what makes torchrun's processes join a group: here each process is a shard
    "RANK": (lambda i: {"RANK": str(i), "WORLD_SIZE": "2"}, []),
}


def test_shard_auto_is_the_shard_it_names_and_says_so(registry: Registry, data: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = [tmp_path / f"explicit-{i}" for i in range(2)]
    for i, out in enumerate(explicit):
        assert main(_eval(data, out, "--quiet", "--shard", f"{i}/2")) == 0
        assert f"shard {i}/2 done" in capsys.readouterr().out
        assert json.loads((out / SHARD_FILE).read_text())["shard"] == {"index": i, "count": 2, "source": "--shard"}
    for source, (env, extra) in ENVIRONMENTS.items():
        for i in range(2):
            out = tmp_path / f"{source}-{i}"
            _setenv(monkeypatch, env(i))
            assert main(_eval(data, out, "--quiet", "--shard", "auto", *extra)) == 0
            assert f"shard {i}/2 (from {source}) done" in capsys.readouterr().out
            # the same shard: the same records, and the same manifest but for where it came from
            assert (out / RECORDS_FILE).read_bytes() == (explicit[i] / RECORDS_FILE).read_bytes()
            manifest, expected = _manifest(out), _manifest(explicit[i])
            assert manifest["shard"] == {"index": i, "count": 2, "source": source}
            expected["shard"]["source"] = source
            assert manifest == expected
    _setenv(monkeypatch, {})
    # shards of one run from different engines merge (the source is no part of a shard's identity),
    # into the run of the --shard I/N shards; results.json names each shard's source
    mixed, plain = tmp_path / "mixed", tmp_path / "plain"
    assert main(["merge", str(mixed), str(tmp_path / "RANK-1"), str(tmp_path / "SLURM_ARRAY_TASK_ID-0"), "--quiet"]) == 0
    assert main(["merge", str(plain), *map(str, explicit), "--quiet"]) == 0
    a, b = (json.loads((d / "results.json").read_text()) for d in (mixed, plain))
    assert a["shard_sources"] == ["SLURM_ARRAY_TASK_ID", "RANK"] and b["shard_sources"] == ["--shard", "--shard"]
    assert a["metrics"] == b["metrics"] and a["intervals"] == b["intervals"]
    assert (mixed / "predictions.jsonl").read_text() == (plain / "predictions.jsonl").read_text()


def test_a_shard_resumes_under_either_form(registry: Registry, data: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A finished array task's folder is the same shard's to `--shard I/N` (and back): a rerun
    into it is accepted (it has nothing to do), not refused as another run's."""
    out = tmp_path / "s"
    _setenv(monkeypatch, {"JOB_COMPLETION_INDEX": "1"})
    assert main(_eval(data, out, "--quiet", "--shard", "auto", "--shards", "2")) == 0
    _setenv(monkeypatch, {})
    assert main(_eval(data, out, "--quiet", "--shard", "1/2")) == 0  # finished: nothing evaluated, nothing rewritten
    assert json.loads((out / SHARD_FILE).read_text())["shard"]["source"] == "JOB_COMPLETION_INDEX"
    assert main(_eval(data, out, "--quiet", "--shard", "0/2")) == 2  # another shard is still refused
