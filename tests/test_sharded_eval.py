"""`torchrun --nproc-per-node 2 $(which abduct) eval ...` on CPU (gloo): the ranks split the
model's work, rank 0 alone writes, and predictions.jsonl is byte-identical to one process's;
a rank that fails or dies stops every rank with the unit it was on (no hang), and the run
resumes per rank afterwards. The one-process references run in this process (the CLI as
`abduct` runs it, one torch thread as each rank has): only the launches under torchrun need
fresh interpreters."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("abduct_clip")
from abduct.host import build_registry, reset_registry  # noqa: E402
from abduct_nleye.synth import synthesize as nleye_synth  # noqa: E402
from abduct_sherlock.synth import synthesize as sherlock_synth  # noqa: E402
from conftest import abduct  # noqa: E402

TIMEOUT = 480  # a hang fails the test instead of the session


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# A wrapper around the CLI that adds a test model, as a plugin would: under torchrun the
# processes are fresh interpreters, so the model must be reachable by import.
FLAKY_PLUGIN = '''
import os, sys, time
from abduct import Registration, hookimpl
from abduct import DataError
from abduct.host import build_registry

# the core's chance baseline, whose class is reached through the registry (it is not exported)
RandomModel = type(build_registry().create("model", "random"))


class Flaky(RandomModel):
    """random, except that rank 1 fails (FLAKY=raise) or dies (FLAKY=die) at its second call
    (the second retrieval chunk); slow enough that each finished chunk is stored at once."""

    calls = 0

    def score_matrix(self, visuals, texts):
        self.calls += 1
        if os.environ.get("FLAKY"):
            time.sleep(1.1)
        if os.environ.get("RANK") == "1" and self.calls == 2:
            if os.environ.get("FLAKY") == "die":
                os._exit(3)
            if os.environ.get("FLAKY") == "raise":
                raise DataError("this image cannot be read", file=visuals[0].media)
        return super().score_matrix(visuals, texts)


def make_flaky(spec, settings):
    return Flaky(settings.seed)


class Plugin:
    @hookimpl
    def register_models(self):
        yield Registration("flaky", "random that fails on rank 1", "flaky_plugin:make_flaky")


if __name__ == "__main__":
    from abduct_testing import main
    from abduct.host import build_registry, reset_registry

    reset_registry(build_registry(extra_plugins=[("flaky", Plugin())]))
    sys.exit(main(sys.argv[1:]))
'''


def _abduct(tmp_path: Path, args: list[str], processes: int = 2, env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
    """The CLI with the flaky model under torchrun, ``processes`` ranks."""
    script = tmp_path / "flaky_plugin.py"
    if not script.exists():
        script.write_text(textwrap.dedent(FLAKY_PLUGIN))
    launcher = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(processes),
                "--master-addr", "127.0.0.1", "--master-port", str(_port()), str(script)]
    full_env = {**os.environ, "PYTHONPATH": str(tmp_path), "OMP_NUM_THREADS": "1", **(env or {})}
    with subprocess.Popen([*launcher, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=full_env, start_new_session=True) as launch:
        try:
            out, err = launch.communicate(timeout=TIMEOUT)
        except BaseException:  # a hang: the ranks too, not only torchrun (they would run on after the test)
            os.killpg(launch.pid, signal.SIGKILL)
            raise
    return subprocess.CompletedProcess(launch.args, launch.returncode, out, err)


@contextlib.contextmanager
def _as_one_rank() -> Iterator[None]:
    """This process as the one-process run: the flaky model registered (as the wrapper does)
    and one torch thread (as OMP_NUM_THREADS=1 gives each rank)."""
    import torch

    plugin = types.ModuleType("flaky_plugin")
    exec(textwrap.dedent(FLAKY_PLUGIN), plugin.__dict__)  # the wrapper's own code; FLAKY unset: random
    threads = torch.get_num_threads()
    sys.modules["flaky_plugin"] = plugin
    reset_registry(build_registry(extra_plugins=[("flaky", plugin.Plugin())]))
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        reset_registry()
        sys.modules.pop("flaky_plugin", None)


def _one(args: list[str]) -> subprocess.CompletedProcess[str]:
    """The same command as one process, in this one."""
    with _as_one_rank():
        return abduct(*args)


def _eval_args(task: str, model: str, data: Path, out: Path) -> list[str]:
    return ["eval", task, "--model", model, "--data", str(data), "--out", str(out), "--quiet", "--no-cache",
            "--batch-size", "4"]


@pytest.fixture(scope="module")
def sherlock_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sherlock_synth(tmp_path_factory.mktemp("sherlock") / "data", images=16, seed=0, chunk_instances=4)


@pytest.mark.parametrize(("task", "model"), [
    ("sherlock-retrieval", "clip:tiny"),  # dual encoder: the ranks split the unique images and texts
    ("sherlock-comparison", "random"),    # matrix scorer: the ranks split the visuals
])
def test_two_gloo_processes_equal_one(sherlock_data: Path, tmp_path: Path, task: str, model: str) -> None:
    one = _one(_eval_args(task, model, sherlock_data, tmp_path / "one"))
    two = _abduct(tmp_path, _eval_args(task, model, sherlock_data, tmp_path / "two"))
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr
    assert (tmp_path / "one" / "predictions.jsonl").read_bytes() == (tmp_path / "two" / "predictions.jsonl").read_bytes()
    first, second = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("one", "two"))
    assert first["metrics"] == second["metrics"]
    assert (first["processes"], second["processes"]) == (1, 2)
    assert two.stdout.count("wrote ") == 1  # rank 0 alone reports (and writes)
    assert not (tmp_path / "two" / ".partial").exists()


def test_generation_requests_are_split_too(tmp_path: Path) -> None:
    data = nleye_synth(tmp_path / "nleye", samples=12, seed=0)
    args = ["eval", "nleye-triplet,answer=generate", "--model", "random", "--data", str(data), "--quiet",
            "--no-cache", "--batch-size", "3"]
    one = _one([*args, "--out", str(tmp_path / "one")])
    two = _abduct(tmp_path, [*args, "--out", str(tmp_path / "two")])
    assert one.returncode == 0 and two.returncode == 0, two.stderr
    assert (tmp_path / "one" / "predictions.jsonl").read_bytes() == (tmp_path / "two" / "predictions.jsonl").read_bytes()


def test_an_error_on_one_rank_stops_both_naming_the_unit(sherlock_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    failed = _abduct(tmp_path, _eval_args("sherlock-retrieval", "flaky", sherlock_data, out), env={"FLAKY": "raise"})
    assert failed.returncode != 0
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error:")]
    assert errors and all("this image cannot be read" in line and "unit 'retrieval/chunk-1'" in line for line in errors)
    # torchrun adds its own report of the failed children (ChildFailedError); no frame of ours.
    frames = [line for line in failed.stderr.splitlines() if line.strip().startswith('File "')]
    assert not [f for f in frames if "/abduct" in f and "torch" not in f], failed.stderr
    assert not (out / "results.json").exists()


def test_a_dead_rank_fails_the_run_and_it_resumes_per_rank(sherlock_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = _eval_args("sherlock-retrieval", "flaky", sherlock_data, out)
    died = _abduct(tmp_path, args, env={"FLAKY": "die", "ABDUCT_DIST_TIMEOUT": "60"})
    assert died.returncode != 0
    # Either rank 0 noticed first (its one line names the unit) or torchrun stopped it first
    # (its report names the rank that exited): both within the timeout, neither hangs.
    assert "unit 'retrieval/chunk-1'" in died.stderr or "exitcode  : 3" in died.stderr, died.stderr[-2000:]
    assert not (out / "results.json").exists()
    assert list((out / ".partial").glob("shard-*.jsonl")), "rank 0 keeps the units it finished"
    assert list((out / ".partial" / "rank-1").glob("shard-*.jsonl")), "rank 1 keeps its own"

    resumed = _abduct(tmp_path, args)
    reference = _one(_eval_args("sherlock-retrieval", "flaky", sherlock_data, tmp_path / "ref"))
    assert resumed.returncode == 0, resumed.stderr
    assert reference.returncode == 0, reference.stderr
    assert json.loads((out / "results.json").read_text())["resumed"] is True
    assert (out / "predictions.jsonl").read_bytes() == (tmp_path / "ref" / "predictions.jsonl").read_bytes()
    shutil.rmtree(tmp_path / "ref")
