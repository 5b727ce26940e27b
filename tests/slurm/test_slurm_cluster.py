"""abduct on a real single-node Slurm cluster (munged, slurmctld and slurmd started as root by
``abduct_testing.slurm``; the ``slurm`` nox session): an array job of shards and its merge job
with ``--dependency=afterok``, as ``abduct launch slurm --submit`` writes and submits them, give
the one-process run (metrics, intervals, predictions); a shard cancelled with ``scancel`` in the
middle and submitted again resumes, and the merge still gives the one-process run.

Where the daemons cannot start (not root, packages missing) the tests skip saying why, or fail
under ``ABDUCT_REQUIRE_SLURM=1`` (``./dev test`` sets it where it installs the packages)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct_testing.slurm import SlurmCluster, cluster_or_skip

ABDUCT = str(Path(sys.executable).with_name("abduct"))  # the executable the jobs run
TIMEOUT = 300.0  # seconds a submitted job may take before the test fails (a hang is a failure)
SHARDS = 3

# "random, slowly": a model the shards' own processes find through its entry point (a
# dist-info folder on PYTHONPATH, which sbatch hands to the jobs), so a test can cancel a
# shard while it runs; its results are random's (the same fingerprint)
SLOW_PLUGIN = '''
import time

from abduct import Registration, hookimpl


def make_slow(spec, settings):
    from abduct.host import build_registry

    base = type(build_registry().create("model", "random"))
    delay = float(spec.argument or 1.0)

    class SlowRandom(base):
        def score_matrix(self, visuals, texts):
            time.sleep(delay)
            return super().score_matrix(visuals, texts)

    return SlowRandom(settings.seed)


class Plugin:
    @hookimpl
    def register_models(self):
        yield Registration("slow-random", "random, slowly (the Slurm tests)", "abduct_slow_test:make_slow")


plugin = Plugin()
'''


@pytest.fixture(scope="session")
def cluster() -> Iterator[SlurmCluster]:
    with cluster_or_skip(cpus=2) as started:
        yield started


@pytest.fixture(scope="session")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("slow-plugin")
    (where / "abduct_slow_test.py").write_text(textwrap.dedent(SLOW_PLUGIN))
    info = where / "abduct_slow_test-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: abduct-slow-test\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[abduct]\nslow = abduct_slow_test:plugin\n\n"
                                           "[abduct.api]\nslow = abduct.api:v1\n")
    return where


@pytest.fixture(scope="session")
def job_env(cluster: SlurmCluster, plugin_path: Path) -> dict[str, str]:
    """What the jobs inherit from the submitting process (sbatch's --export=ALL): the cluster,
    the slow model, and one torch thread per shard (two shards share the node's two CPUs)."""
    return {**cluster.env, "PYTHONPATH": str(plugin_path), "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="session")
def sherlock_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic Sherlock corpus of 18 retrieval chunks: every shard of 3 gets several units."""
    data = tmp_path_factory.mktemp("sherlock") / "data"
    made = subprocess.run([ABDUCT, "sherlock", "synth", "--out", str(data), "--images", "72", "--chunk-size", "2"],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    return data


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def one_process(env: dict[str, str], out: Path, eval_args: list[str]) -> subprocess.Popen[str]:
    """The reference run, started while the cluster works (the node's second CPU is idle once
    only the last shard or the merge runs); ``finished`` waits for it."""
    return subprocess.Popen([ABDUCT, "eval", *eval_args, "--out", str(out), "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def finished(reference: subprocess.Popen[str], out: Path) -> Path:
    _, err = reference.communicate(timeout=TIMEOUT)
    assert reference.returncode == 0, f"the one-process run exited {reference.returncode}:\n{err}"
    return out


def same_run(one: Path, merged: Path) -> None:
    """``merged`` holds the run ``one`` holds: metrics, intervals and details exactly, the same
    predictions (as a set: shards write in their own order) and the same units."""
    a, b = (json.loads((d / "results.json").read_text()) for d in (one, merged))
    for key in ("task", "split", "seed", "limit", "inputs", "metrics", "metric_info", "intervals", "details"):
        assert a.get(key) == b.get(key), key
    assert a["model"].get("fingerprint") == b["model"].get("fingerprint")
    lines = [(d / "predictions.jsonl").read_text().splitlines() for d in (one, merged)]
    assert len(lines[0]) == len(lines[1]) > 0 and set(lines[0]) == set(lines[1])
    assert (one / "units.json").read_text() == (merged / "units.json").read_text()
    assert b["shards"] == SHARDS


def wait_all(cluster: SlurmCluster, *jobs: str) -> list[str]:
    return [cluster.wait(job, TIMEOUT) for job in jobs]


def launch(env: dict[str, str], out: Path, eval_args: list[str]) -> dict[str, str]:
    """``abduct launch slurm --shards 3 --out OUT --submit --json -- EVAL-ARGS``: the job ids."""
    submitted = run(env, ABDUCT, "launch", "slurm", "--shards", str(SHARDS), "--out", str(out), "--submit", "--json",
                    "--", *eval_args)
    answer = json.loads(submitted.stdout)
    assert answer["engine"] == "slurm"
    return {"array": str(answer["array_job"]), "merge": str(answer["merge_job"])}


def test_an_array_job_runs_every_task_and_then_its_dependant(cluster: SlurmCluster, tmp_path: Path) -> None:
    """The harness itself: an sbatch array of 2 and a job after it, with the variables
    ``--shard auto`` reads."""
    array = cluster.run("sbatch", "--parsable", "--array=0-1", "--output", str(tmp_path / "task-%a.out"), "--wrap",
                        "echo $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN").stdout.strip()
    after = cluster.run("sbatch", "--parsable", f"--dependency=afterok:{array}", "--output", str(tmp_path / "after.out"),
                        "--wrap", "echo after").stdout.strip()
    assert wait_all(cluster, array, after) == ["COMPLETED", "COMPLETED"]
    assert [(tmp_path / f"task-{i}.out").read_text() for i in range(2)] == ["0 2 0\n", "1 2 0\n"]
    assert (tmp_path / "after.out").read_text() == "after\n"


def test_a_hand_written_array_with_shard_auto_merges_into_the_one_process_run(
        cluster: SlurmCluster, job_env: dict[str, str], sherlock_data: Path, tmp_path: Path) -> None:
    """A user's own sbatch array: ``--shard auto`` with no ``--shards`` takes index and count
    from the variables real Slurm sets, and a merge job after it gives the one-process run."""
    eval_args = ["sherlock-retrieval", "--model", "random", "--data", str(sherlock_data)]
    shard = f"{ABDUCT} eval {' '.join(eval_args)} --quiet --shard auto --out {tmp_path}/shards/shard-$SLURM_ARRAY_TASK_ID"
    logs = tmp_path / "logs"
    logs.mkdir()
    array = run(job_env, "sbatch", "--parsable", f"--array=0-{SHARDS - 1}", "--output", f"{logs}/%A_%a.out",
                "--wrap", shard).stdout.strip()
    merge = run(job_env, "sbatch", "--parsable", f"--dependency=afterok:{array}", "--output", f"{logs}/merge.out",
                "--wrap", f"{ABDUCT} merge {tmp_path}/merged {tmp_path}/shards/shard-*").stdout.strip()
    reference = one_process(job_env, tmp_path / "one", eval_args)
    assert wait_all(cluster, array, merge) == ["COMPLETED", "COMPLETED"], cluster.log_tail()
    same_run(finished(reference, tmp_path / "one"), tmp_path / "merged")
    for i in range(SHARDS):
        manifest = json.loads((tmp_path / "shards" / f"shard-{i}" / "shard.json").read_text())
        assert manifest["shard"] == {"index": i, "count": SHARDS, "source": "SLURM_ARRAY_TASK_ID"}


@pytest.mark.parametrize("model", ["random", "clip:tiny"])
def test_launch_slurm_merges_into_the_one_process_run(
        cluster: SlurmCluster, job_env: dict[str, str], sherlock_data: Path, tmp_path: Path, model: str) -> None:
    eval_args = ["sherlock-retrieval", "--model", model, "--data", str(sherlock_data)]
    if model.startswith("clip:"):  # each process its own embedding cache: no run reads another's
        eval_args += ["--no-cache"]
    out = tmp_path / "launched"
    jobs = launch(job_env, out, eval_args)
    reference = one_process(job_env, tmp_path / "one", eval_args)
    assert wait_all(cluster, jobs["array"], jobs["merge"]) == ["COMPLETED", "COMPLETED"], cluster.log_tail()
    assert sorted(p.name for p in (out / "shards").iterdir()) == [f"shard-{i}" for i in range(SHARDS)]
    same_run(finished(reference, tmp_path / "one"), out)
    # each array task found its shard in the variables real Slurm set
    assert json.loads((out / "results.json").read_text())["shard_sources"] == ["SLURM_ARRAY_TASK_ID"] * SHARDS


def test_a_shard_cancelled_mid_run_resumes_when_launched_again(
        cluster: SlurmCluster, job_env: dict[str, str], sherlock_data: Path, tmp_path: Path) -> None:
    eval_args = ["sherlock-retrieval", "--model", "slow-random:0.5", "--data", str(sherlock_data)]
    out = tmp_path / "launched"
    jobs = launch(job_env, out, eval_args)
    partial = out / "shards" / "shard-0" / ".partial"
    deadline = time.monotonic() + TIMEOUT
    while not any(p.stat().st_size for p in partial.glob("*.jsonl")):  # a unit stored, not all
        assert time.monotonic() < deadline, f"shard 0 stored nothing in {TIMEOUT:.0f} s\n{cluster.log_tail()}"
        time.sleep(0.1)
    cluster.run("scancel", f"{jobs['array']}_0")
    assert cluster.wait(f"{jobs['array']}_0", TIMEOUT) == "CANCELLED"
    assert not (out / "shards" / "shard-0" / "shard.json").exists()  # stopped in the middle
    cluster.run("scancel", jobs["merge"])  # its dependency can no longer be met
    cluster.wait(jobs["array"], TIMEOUT)
    assert not (out / "results.json").exists()

    again = launch(job_env, out, eval_args)  # the same command again
    assert wait_all(cluster, again["array"], again["merge"]) == ["COMPLETED", "COMPLETED"], cluster.log_tail()
    manifest = json.loads((out / "shards" / "shard-0" / "shard.json").read_text())
    assert manifest["resumed"] is True and 0 < manifest["resumed_units"]["kept"] < manifest["resumed_units"]["of"]
    reference = one_process(job_env, tmp_path / "one", [*eval_args[:2], "slow-random:0", *eval_args[3:]])
    same_run(finished(reference, tmp_path / "one"), out)

