"""The job files of a sharded evaluation, as text: nothing here writes or runs anything.

Every engine gets the same layout under the run's folder ``out``: ``out/launch/`` the job files,
``out/launch/logs/`` the jobs' logs (Slurm), ``out/shards/shard-I`` shard ``I``'s ``--out``, and
the merged run in ``out`` itself. Each shard task runs ``abduct eval EVAL-ARGS --shard auto
--shards N`` (Ray: ``--shard I/N``, as it names the task itself); the merge names every shard's
folder, so that ``abduct merge`` refuses a missing or unfinished one in one line naming it.
Paths are absolute; in shell text they are quoted (``shlex.quote``), in ``#SBATCH`` lines
double-quoted (Slurm reads those lines itself, and knows double quotes only).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LAUNCH_DIR = "launch"
LOGS_DIR = "logs"
SHARDS_DIR = "shards"
JOB_FILES = {"slurm": ("eval.sbatch", "merge.sbatch"), "k8s": ("job.yaml", "merge-job.yaml"), "ray": ("ray_job.py",)}
MERGE_POLL_S = 30  # how often the Kubernetes merge Job looks for the shards' manifests


@dataclass(frozen=True)
class Launch:
    """What every engine's files are made of: the abduct executable the jobs run, ``abduct
    eval``'s arguments (the task and its options, without --out and --shard), the number of
    shards, the run's folder (absolute) and the jobs' name."""

    abduct: str
    eval_args: tuple[str, ...]
    shards: int
    out: Path
    name: str
    files_at: Path | None = None  # where the job files go, when not DIR/launch (k8s: a DIR only the pods see)

    def shard_dir(self, index: int | str) -> str:
        return f"{self.out / SHARDS_DIR}/shard-{index}"

    @property
    def shard_dirs(self) -> list[str]:
        return [self.shard_dir(i) for i in range(self.shards)]

    def eval_command(self, shard: Sequence[str], out: str) -> list[str]:
        return [self.abduct, "eval", *self.eval_args, *shard, "--out", out]

    def merge_command(self) -> list[str]:
        return [self.abduct, "merge", str(self.out), *self.shard_dirs]

    @property
    def files_dir(self) -> Path:
        return self.files_at if self.files_at is not None else self.out / LAUNCH_DIR


@dataclass(frozen=True)
class SlurmResources:
    partition: str | None = None
    time: str | None = None
    gpus: int | None = None
    cpus: int | None = None
    mem: str | None = None
    account: str | None = None
    sbatch_lines: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()


@dataclass(frozen=True)
class KubernetesResources:
    image: str
    claim: str
    mount: Path
    namespace: str | None = None
    gpus: int | None = None
    cpus: str | None = None
    mem: str | None = None


@dataclass(frozen=True)
class RayResources:
    cpus: float = 1.0
    gpus: float = 0.0


def _sbatch_quote(text: str) -> str:
    """A value in an ``#SBATCH`` line: Slurm splits those at blanks and reads double quotes only."""
    if text and not any(c in text for c in ' \t"\\\''):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _shell(words: Sequence[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


def _directive(option: str, value: str | int) -> str:
    return f"#SBATCH {option}={_sbatch_quote(str(value))}"


def _header(launch: Launch, name: str, log: str, resources: SlurmResources, *, shard_job: bool) -> list[str]:
    lines = ["#!/bin/bash", _directive("--job-name", name)]
    if shard_job:
        lines.append(f"#SBATCH --array=0-{launch.shards - 1}")
    lines.append(_directive("--output", f"{launch.files_dir / LOGS_DIR}/{log}"))
    for option, value in (("--partition", resources.partition), ("--account", resources.account),
                          ("--time", resources.time)):
        if value:
            lines.append(_directive(option, value))
    if shard_job:
        if resources.gpus:
            lines.append(_directive("--gres", f"gpu:{resources.gpus}"))
        if resources.cpus:
            lines.append(_directive("--cpus-per-task", resources.cpus))
        if resources.mem:
            lines.append(_directive("--mem", resources.mem))
        lines += [line if line.startswith("#SBATCH") else f"#SBATCH {line}" for line in resources.sbatch_lines]
    return lines


def slurm_files(launch: Launch, resources: SlurmResources) -> dict[str, str]:
    """``eval.sbatch`` (one array task per shard, the shard from SLURM_ARRAY_TASK_ID) and
    ``merge.sbatch`` (submitted with ``--dependency=afterok:`` on the array)."""
    # the task id stays a shell variable, outside the quoted path
    out = shlex.quote(launch.shard_dir("")) + '"$SLURM_ARRAY_TASK_ID"'
    shard = _shell([launch.abduct, "eval", *launch.eval_args, "--shard", "auto", "--shards", str(launch.shards), "--out"])
    eval_lines = [
        *_header(launch, launch.name, "eval-%A_%a.out", resources, shard_job=True),
        f"# abduct launch: shard $SLURM_ARRAY_TASK_ID of {launch.shards}, into {launch.shard_dir('$SLURM_ARRAY_TASK_ID')};",
        "# sbatch this file again to resume a shard that stopped: the units it stored are kept",
        "set -euo pipefail",
        *resources.setup,
        f"{shard} {out}",
    ]
    merge_lines = [
        *_header(launch, f"{launch.name}-merge", "merge-%j.out", resources, shard_job=False),
        f"# abduct launch: the run of all {launch.shards} shards, into {launch.out}",
        "set -euo pipefail",
        f"exec {_shell(launch.merge_command())}",
    ]
    eval_file, merge_file = JOB_FILES["slurm"]
    return {eval_file: "\n".join(eval_lines) + "\n", merge_file: "\n".join(merge_lines) + "\n"}


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """Block-style YAML of dicts, lists and scalars; every string double-quoted (as JSON writes
    it, which YAML reads as it is), so no value is read as another type."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}{key}:")
                lines += _yaml(item, indent + 2)
            else:
                lines.append(f"{pad}{key}: {json.dumps(item)}")
    else:
        for item in value:
            if isinstance(item, dict | list) and item:
                inner = _yaml(item, indent + 2)
                lines.append(f"{pad}- {inner[0].lstrip()}")
                lines += inner[1:]
            else:
                lines.append(f"{pad}- {json.dumps(item)}")
    return lines


def _pod(launch: Launch, k8s: KubernetesResources, container: dict[str, Any], restart: str) -> dict[str, Any]:
    return {
        "restartPolicy": restart,
        "containers": [{**container, "image": k8s.image,
                        "volumeMounts": [{"name": "abduct", "mountPath": str(k8s.mount)}]}],
        "volumes": [{"name": "abduct", "persistentVolumeClaim": {"claimName": k8s.claim}}],
    }


def _job(launch: Launch, k8s: KubernetesResources, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": {"app.kubernetes.io/name": "abduct",
                                                         "abduct.launch/run": launch.name}}
    if k8s.namespace:
        metadata["namespace"] = k8s.namespace
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}


def kubernetes_manifests(launch: Launch, k8s: KubernetesResources) -> dict[str, dict[str, Any]]:
    """The Indexed Job (one pod per shard index, the shard from JOB_COMPLETION_INDEX) and the
    merge Job, as objects (``kubernetes_files`` writes them as YAML)."""
    amounts: dict[str, Any] = {}
    if k8s.cpus:
        amounts["cpu"] = k8s.cpus
    if k8s.mem:
        amounts["memory"] = k8s.mem
    limits = {**amounts, **({"nvidia.com/gpu": k8s.gpus} if k8s.gpus else {})}
    resources = {key: value for key, value in (("requests", amounts), ("limits", limits)) if value}
    # exec form, no shell: Kubernetes itself expands $(JOB_COMPLETION_INDEX), which the Job
    # controller sets in every container of an Indexed Job
    shard = {"name": "shard", "resources": resources,
             "command": launch.eval_command(["--shard", "auto", "--shards", str(launch.shards)],
                                            launch.shard_dir("$(JOB_COMPLETION_INDEX)"))}
    job = _job(launch, k8s, launch.name, {
        "completionMode": "Indexed", "completions": launch.shards, "parallelism": launch.shards,
        "template": {"metadata": {"labels": {"abduct.launch/run": launch.name}},
                     "spec": _pod(launch, k8s, shard, "OnFailure")},
    })
    # Kubernetes has no dependencies between Jobs: the merge waits for every shard's manifest
    # (shard.json, written last), then merges, which checks the shards themselves
    manifest = shlex.quote(launch.shard_dir("")) + '"$i"/shard.json'
    wait = (f'i=0; while [ "$i" -lt {launch.shards} ]; do until [ -f {manifest} ]; do sleep {MERGE_POLL_S}; done; '
            "i=$((i + 1)); done;")
    merge = {"name": "merge", "command": ["/bin/sh", "-c", f"{wait} exec {_shell(launch.merge_command())}"]}
    merge_job = _job(launch, k8s, f"{launch.name}-merge", {
        "backoffLimit": 2, "template": {"spec": _pod(launch, k8s, merge, "Never")}})
    job_file, merge_file = JOB_FILES["k8s"]
    return {job_file: job, merge_file: merge_job}


def kubernetes_files(launch: Launch, k8s: KubernetesResources) -> dict[str, str]:
    head = f"# abduct launch k8s: {launch.shards} shards into {launch.out}\n"
    return {name: head + "\n".join(_yaml(manifest)) + "\n"
            for name, manifest in kubernetes_manifests(launch, k8s).items()}


RAY_SCRIPT = '''"""Written by `abduct launch ray`: {shards} shards of one evaluation, one Ray task each, then
`abduct merge` into {out}. Submitted with `ray job submit ... -- python ray_job.py`; run on
its own (`python ray_job.py`), it starts a local Ray instance. Rerunning it resumes: a finished
shard is not recomputed."""

import subprocess
import sys

import ray

ABDUCT = {abduct!r}
EVAL_ARGS = {eval_args!r}
SHARDS = {shards!r}
OUT = {out!r}
SHARD_DIRS = {shard_dirs!r}


@ray.remote(num_cpus={cpus!r}, num_gpus={gpus!r})
def run_shard(index: int) -> int:
    command = [ABDUCT, "eval", *EVAL_ARGS, "--shard", f"{{index}}/{{SHARDS}}", "--out", SHARD_DIRS[index]]
    return subprocess.run(command, check=False).returncode


def main() -> int:
    ray.init()  # the cluster's address under `ray job submit` (RAY_ADDRESS); a local instance otherwise
    codes = ray.get([run_shard.remote(index) for index in range(SHARDS)])
    failed = [f"{{index}}/{{SHARDS}} (exit {{code}})" for index, code in enumerate(codes) if code != 0]
    if failed:
        word = "shard" if len(failed) == 1 else "shards"
        print(f"error: {{word}} {{', '.join(failed)}} failed; rerun this job to resume", file=sys.stderr)
        return 1
    return subprocess.run([ABDUCT, "merge", OUT, *SHARD_DIRS], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
'''


def ray_files(launch: Launch, ray: RayResources) -> dict[str, str]:
    """``ray_job.py``: one Ray task per shard, each running its shard as a subprocess, then the merge."""
    text = RAY_SCRIPT.format(abduct=launch.abduct, eval_args=list(launch.eval_args), shards=launch.shards,
                             out=str(launch.out), shard_dirs=launch.shard_dirs, cpus=ray.cpus, gpus=ray.gpus)
    return {JOB_FILES["ray"][0]: text}
