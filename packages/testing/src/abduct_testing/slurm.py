"""A real single-node Slurm cluster for tests: munge, slurmctld and slurmd (Debian's ``munge``,
``slurmctld``, ``slurmd`` and ``slurm-client``) started as root in a temporary folder, with
their own munge key, socket, ``slurm.conf``, state, logs and ports, and stopped by their process
ids afterwards. Nothing under /etc or /run is read or written.

``slurm_or_skip()`` skips a test naming what is missing, never silently; where
``ABDUCT_REQUIRE_SLURM=1`` (``./dev test`` sets it where it can install the packages) it fails
instead, so CI cannot pass with the cluster's tests skipped. ``./dev test`` installs the
packages in the background and creates ``ABDUCT_SLURM_READY`` once done; the tests wait for it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from abduct_testing.browser import wait_for_install

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo", "munge")
START_TIMEOUT = 30.0
# job states after which a job never runs again (scontrol's JobState)
FINAL_STATES = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                          "PREEMPTED", "BOOT_FAIL", "DEADLINE"})


class SlurmUnavailable(RuntimeError):
    """The cluster cannot be started here; the message says why."""


@dataclass
class SlurmCluster:
    """A started cluster: its folder, ``slurm.conf`` and the environment its clients need."""

    root: Path
    conf: Path
    node: str
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """``os.environ`` with ``SLURM_CONF`` pointing at this cluster (for sbatch, squeue, ...)."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A Slurm client command against this cluster."""
        done = subprocess.run(list(args), capture_output=True, text=True, env=self.env, timeout=60)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
        return done

    def job_states(self, job: str) -> dict[str, str]:
        """``{job id: state}`` for a job, or each task of an array (``scontrol show job``)."""
        shown = self.run("scontrol", "show", "job", "--oneliner", job, check=False)
        if shown.returncode != 0:
            return {}
        states = {}
        for line in shown.stdout.splitlines():
            ident = re.search(r"\bArrayJobId=(\d+)", line) or re.search(r"\bJobId=(\d+)", line)
            task = re.search(r"\bArrayTaskId=(\S+)", line)
            state = re.search(r"\bJobState=(\S+)", line)
            if ident and state:
                states[f"{ident.group(1)}" + (f"_{task.group(1)}" if task else "")] = state.group(1)
        return states

    def wait(self, job: str, timeout: float = 300.0) -> str:
        """Wait until every task of ``job`` has ended; its state (the first one that is not
        COMPLETED, else COMPLETED). A job still queued or running at ``timeout`` fails the test,
        naming its states and the controller's log tail."""
        deadline = time.monotonic() + timeout
        states: dict[str, str] = {}
        while time.monotonic() < deadline:
            states = self.job_states(job)
            if states and all(state in FINAL_STATES for state in states.values()):
                return next((s for s in states.values() if s != "COMPLETED"), "COMPLETED")
            time.sleep(0.5)
        raise AssertionError(f"Slurm job {job} not finished after {timeout:.0f} s: {states}\n{self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        tails = []
        for name in ("slurmctld", "slurmd"):
            log = self.root / f"{name}.log"
            text = log.read_text(errors="replace").splitlines()[-lines:] if log.exists() else []
            tails.append(f"--- {name}.log ---\n" + "\n".join(text))
        return "\n".join(tails)


def missing_programs() -> list[str]:
    return [name for name in (*DAEMONS, *CLIENTS) if shutil.which(name) is None]


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def slurm_conf(root: Path, node: str, cpus: int = 2) -> str:
    """A one-node ``slurm.conf`` whose every file lies under ``root``; root runs every daemon
    and job, cores are the consumable resource and no cgroups are needed."""
    ctld_port, node_port = _free_ports(2)
    return "\n".join([
        "ClusterName=abducttest",
        f"SlurmctldHost={node}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={root / 'munge.socket'}",
        f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={node_port}",
        f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={root / 'spool'}",
        f"SlurmctldPidFile={root / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'slurmd.pid'}",
        f"SlurmctldLogFile={root / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'slurmd.log'}",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "MpiDefault=none",
        "MailProg=/bin/true",
        "ReturnToService=2",
        "MinJobAge=300",
        "SchedulerType=sched/builtin",
        "SchedulerParameters=sched_interval=1",
        f"NodeName={node} CPUs={cpus} State=UNKNOWN",
        f"PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


def _stop(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    for process in reversed(processes):  # slurmd, slurmctld, then munged
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def slurm_cluster(cpus: int = 2) -> Iterator[SlurmCluster]:
    """Start munged, slurmctld and slurmd in the foreground as this process's children, wait
    until the node is idle, and stop the three by their process ids on the way out. Raises
    ``SlurmUnavailable`` naming why when they cannot be started."""
    if os.name != "posix" or os.geteuid() != 0:
        raise SlurmUnavailable("the Slurm daemons run as root here, and this process is not root")
    if missing := missing_programs():
        raise SlurmUnavailable(f"{', '.join(missing)} not on PATH (apt-get install slurmctld slurmd slurm-client munge)")
    # a short folder: munge's socket path must fit in 108 bytes; every parent must be
    # searchable by all (munged checks)
    root = Path(tempfile.mkdtemp(prefix="abduct-slurm-"))
    root.chmod(0o755)
    node = socket.gethostname().split(".")[0]
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    for name in ("state", "spool"):
        (root / name).mkdir()
    conf = root / "slurm.conf"
    conf.write_text(slurm_conf(root, node, cpus))
    cluster = SlurmCluster(root, conf, node)
    processes: list[subprocess.Popen[bytes]] = []
    commands = {
        "munged": ["munged", "--foreground", f"--key-file={key}", f"--socket={root / 'munge.socket'}",
                   f"--pid-file={root / 'munged.pid'}", f"--log-file={root / 'munged.log'}",
                   f"--seed-file={root / 'munged.seed'}"],
        "slurmctld": ["slurmctld", "-D", "-i", "-f", str(conf)],
        "slurmd": ["slurmd", "-D", "-f", str(conf)],
    }
    try:
        for name, command in commands.items():
            with (root / f"{name}.out").open("wb") as out:
                processes.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=cluster.env))
            cluster.pids[name] = processes[-1].pid
            if name == "munged":
                _wait_for(lambda: (root / "munge.socket").exists(), processes, root, "munged's socket")
        _wait_for(lambda: "idle" in cluster.run("sinfo", "-h", "-o", "%T", check=False).stdout,
                  processes, root, f"node {node} idle")
    except BaseException:
        _stop(processes)
        shutil.rmtree(root, ignore_errors=True)  # what the logs said is in the exception
        raise
    try:
        yield cluster
    finally:
        # nothing of the tests runs on: a job's slurmstepd outlives slurmd, so cancel and wait
        jobs = cluster.run("squeue", "-h", "-o", "%i", check=False).stdout.split()
        for job in jobs:
            cluster.run("scancel", job, check=False)
        deadline = time.monotonic() + 20
        while jobs and cluster.run("squeue", "-h", "-o", "%i", check=False).stdout.strip() \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        _stop(processes)
        shutil.rmtree(root, ignore_errors=True)


def _wait_for(ready: Callable[[], bool], processes: Sequence[subprocess.Popen[bytes]], root: Path, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                name = Path(str(process.args[0])).name  # type: ignore[index]
                raise SlurmUnavailable(f"{name} exited {process.returncode} at start: "
                                       f"{_last_lines(root, name)}")
        if ready():
            return
        time.sleep(0.1)
    raise SlurmUnavailable(f"no {what} after {START_TIMEOUT:.0f} s: {_last_lines(root, 'slurmctld')}")


def _last_lines(root: Path, name: str, lines: int = 5) -> str:
    text: list[str] = []
    for log in (root / f"{name}.out", root / f"{name}.log"):
        if log.exists():
            text += log.read_text(errors="replace").splitlines()
    return " | ".join(text[-lines:]) or "(no log)"


def slurm_or_skip() -> None:
    """Wait for a background install (``ABDUCT_SLURM_READY``), then ``pytest.skip`` naming what
    is missing (``pytest.fail`` under ``ABDUCT_REQUIRE_SLURM=1``) when the cluster cannot run."""
    import pytest

    if os.environ.get("ABDUCT_SLURM_READY"):
        wait_for_install(Path(os.environ["ABDUCT_SLURM_READY"]))
    missing = pytest.fail if os.environ.get("ABDUCT_REQUIRE_SLURM") == "1" else pytest.skip
    if os.name != "posix" or os.geteuid() != 0:
        missing("the Slurm tests start munged, slurmctld and slurmd as root, and this is not root")
    if programs := missing_programs():
        missing(f"{', '.join(programs)} not on PATH: the Slurm tests need them "
                "(apt-get install slurmctld slurmd slurm-client munge; ./dev test does it as root)")


@contextmanager
def cluster_or_skip(cpus: int = 2) -> Iterator[SlurmCluster]:
    """``slurm_cluster`` after ``slurm_or_skip``; a start that fails skips (or fails) with its reason."""
    import pytest

    slurm_or_skip()
    stack = ExitStack()
    try:
        cluster = stack.enter_context(slurm_cluster(cpus))
    except SlurmUnavailable as exc:
        missing = pytest.fail if os.environ.get("ABDUCT_REQUIRE_SLURM") == "1" else pytest.skip
        missing(f"cannot start the Slurm cluster: {exc}")
    with stack:
        yield cluster
