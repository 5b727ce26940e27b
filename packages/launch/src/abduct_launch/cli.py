"""``abduct launch slurm|k8s|ray --shards N --out DIR [options] -- EVAL-ARGS...``: writes the job
files (``abduct_launch.jobs``) into DIR/launch and, with ``--submit``, hands them to the engine's
own client (sbatch, kubectl, ray). EVAL-ARGS are checked before anything is written."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from abduct import AbductError, Spec
from abduct_launch.jobs import (
    JOB_FILES,
    LOGS_DIR,
    KubernetesResources,
    Launch,
    RayResources,
    SlurmResources,
    kubernetes_files,
    ray_files,
    slurm_files,
)

# what the launcher gives every shard itself
REFUSED = {"--out": "the shards' folders are DIR/shards/shard-I (give --out DIR to abduct launch)",
           "--shard": "each job names its shard", "--shards": "give --shards N to abduct launch"}
PATH_OPTIONS = ("--data", "--cache-dir")  # made absolute: a job runs in another folder than this command


def _eval_value_options(ctx: click.Context) -> set[str]:
    """The options of ``abduct eval`` that take a value (so that the task is found among EVAL-ARGS)."""
    root = ctx.find_root()
    command = root.command.get_command(root, "eval") if isinstance(root.command, click.Group) else None
    if command is None:
        return {"--model", "--data", "--split", "--limit", "--cache-dir", "--judge", "--dataset", "--ci-resamples",
                "--device", "--batch-size", "--seed"}
    return {name for param in command.params if isinstance(param, click.Option) and not param.is_flag
            and not param.count for name in param.opts}


def checked_eval_args(ctx: click.Context, eval_args: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The task's name and EVAL-ARGS with --data/--cache-dir made absolute; one line for what a
    launch cannot run: the options it sets itself, no task, a task no installed plugin registers."""
    takes_value = _eval_value_options(ctx)
    task: str | None = None
    args = list(eval_args)
    i = 0
    while i < len(args):
        word = args[i]
        option, has_value, value = word.partition("=")
        if option in REFUSED:
            raise AbductError(f"{option} among the arguments of abduct eval: {REFUSED[option]}")
        if option in PATH_OPTIONS:
            where = i if has_value else i + 1
            if where < len(args):
                absolute = str(Path(value if has_value else args[where]).expanduser().absolute())
                args[where] = f"{option}={absolute}" if has_value else absolute
        if word.startswith("-"):
            i += 1 if has_value or option not in takes_value else 2
            continue
        if task is None:
            task = word
        i += 1
    if task is None:
        raise AbductError("no task among the arguments of abduct eval (abduct launch ENGINE ... -- TASK --model ...)")
    from abduct.host import get_registry

    name = Spec.parse(task).name
    get_registry().get("task", name)  # one line naming it, and what is installed, when unknown
    return name, tuple(args)


def _abduct_executable(given: str | None, *, local: bool) -> str:
    """The abduct the jobs run: ``given`` (made absolute where it names a file here), else the one
    beside the Python running this command (or on PATH); a container's own ``abduct`` for k8s."""
    if given is None:
        if not local:
            return "abduct"
        beside = Path(sys.executable).parent / "abduct"
        given = str(beside) if beside.is_file() else shutil.which("abduct") or "abduct"
    path = Path(given).expanduser()
    if local and path.is_file():
        return str(path.absolute())
    if local and "/" not in given and shutil.which(given):
        return str(Path(shutil.which(given) or given).absolute())
    return given


def write_files(launch: Launch, engine: str, files: dict[str, str], overwrite: bool) -> list[Path]:
    """Write ``files`` into DIR/launch (and make DIR/launch/logs); another launch's files there are
    refused unless ``overwrite`` (then removed: its job files only, never a shard or a run)."""
    folder = launch.files_dir
    ours = {folder / name for name in files}
    present = [folder / name for names in JOB_FILES.values() for name in names if (folder / name).is_file()]
    other = [path for path in present
             if path not in ours or path.read_text(encoding="utf-8") != files[path.name]]
    if other and not overwrite:
        raise AbductError(f"{folder} holds the files of another launch ({', '.join(p.name for p in other)}); use "
                          "another --out, or --overwrite to replace them")
    for path in present:
        if path not in ours:
            path.unlink()
    try:
        (folder / LOGS_DIR if engine == "slurm" else folder).mkdir(parents=True, exist_ok=True)  # Slurm's logs
        for name, text in files.items():
            path = folder / name
            path.write_text(text, encoding="utf-8")
            if name.endswith(".sbatch"):
                path.chmod(0o755)
    except OSError as exc:
        hint = " (k8s: --files DIR writes them where this machine can)" if engine == "k8s" else ""
        raise AbductError(f"cannot write the job files into {folder}: {exc.strerror or exc}{hint}") from None
    return sorted(ours)


def run_client(command: list[str]) -> str:
    """Run an engine's client; its standard output, or one line saying why it failed."""
    if shutil.which(command[0]) is None:
        raise AbductError(f"{command[0]} is not on PATH: run `{_join(command)}` where it is, or leave out --submit")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise AbductError(f"{_join(command)} failed (exit {done.returncode}){': ' + said[-1] if said else ''}")
    return done.stdout


def _join(command: Sequence[str]) -> str:
    import shlex

    return " ".join(shlex.quote(word) for word in command)


def common_options(function: Callable[..., Any]) -> Callable[..., Any]:
    for decorator in reversed([
        click.option("--shards", "shards", type=click.IntRange(min=1), required=True, metavar="N",
                     help="The number of shards (jobs, array tasks or Ray tasks)."),
        click.option("--out", "out_dir", type=click.Path(path_type=Path), required=True, metavar="DIR",
                     help="The run's folder: job files in DIR/launch, shards in DIR/shards/shard-I, the merged run "
                          "in DIR."),
        click.option("--abduct", "abduct", default=None, metavar="CMD",
                     help="The abduct executable the jobs run (default: the one beside this Python; k8s: the "
                          "image's abduct)."),
        click.option("--job-name", default=None, help="The jobs' name (default: abduct-TASK)."),
        click.option("--overwrite", is_flag=True, help="Replace another launch's job files in DIR/launch."),
        click.option("--submit", is_flag=True, help="Submit the jobs with the engine's client."),
        click.option("--json", "as_json", is_flag=True, help="Print what was written (and submitted) as JSON."),
        click.argument("eval_args", nargs=-1, type=click.UNPROCESSED, metavar="-- EVAL-ARGS..."),
    ]):
        function = decorator(function)
    return function


@click.group("launch")
def launch_group() -> None:
    """Write (and with --submit, submit) the jobs of a sharded evaluation for a job engine:
    `abduct launch slurm|k8s|ray --shards N --out DIR [OPTIONS] -- TASK --model ... --data ...`
    (EVAL-ARGS: what follows `abduct eval`, without --out and --shard). Each shard runs
    `abduct eval ... --shard auto` into DIR/shards/shard-I, then `abduct merge` writes the run
    into DIR. Rerunning a launch resumes: a finished shard is not recomputed."""


def _launch(ctx: click.Context, eval_args: Sequence[str], shards: int, out_dir: Path, abduct: str | None,
            job_name: str | None, *, local: bool, files_at: Path | None = None) -> Launch:
    task, args = checked_eval_args(ctx, eval_args)
    return Launch(abduct=_abduct_executable(abduct, local=local), eval_args=args, shards=shards,
                  out=out_dir.expanduser().absolute(), name=job_name or f"abduct-{task}",
                  files_at=files_at.expanduser().absolute() if files_at is not None else None)


def _report(engine: str, launch: Launch, written: list[Path], as_json: bool, submitted: dict[str, Any],
            then: list[str]) -> None:
    if as_json:
        click.echo(json.dumps({"engine": engine, **submitted, "files": [str(p) for p in written],
                               "out": str(launch.out)}, indent=2))
        return
    click.echo(f"wrote {', '.join(str(p) for p in written)}")
    for line in then:
        click.echo(line)


@launch_group.command("slurm")
@common_options
@click.option("--partition", default=None, help="#SBATCH --partition.")
@click.option("--time", "time_limit", default=None, metavar="TIME", help="#SBATCH --time, per array task.")
@click.option("--gpus", type=click.IntRange(min=1), default=None, help="GPUs per array task (#SBATCH --gres=gpu:G).")
@click.option("--cpus", type=click.IntRange(min=1), default=None, help="#SBATCH --cpus-per-task.")
@click.option("--mem", default=None, help="#SBATCH --mem (e.g. 32G), per array task.")
@click.option("--account", default=None, help="#SBATCH --account.")
@click.option("--sbatch-line", "sbatch_lines", multiple=True, metavar="LINE",
              help="Another #SBATCH line for the array (e.g. --constraint=a100); repeatable.")
@click.option("--setup", multiple=True, metavar="LINE",
              help="A shell line each array task runs before abduct (module load, starting a model server); "
                   "repeatable.")
@click.pass_context
def slurm_cmd(ctx: click.Context, shards: int, out_dir: Path, abduct: str | None, job_name: str | None,
              overwrite: bool, submit: bool, as_json: bool, eval_args: tuple[str, ...], partition: str | None,
              time_limit: str | None, gpus: int | None, cpus: int | None, mem: str | None, account: str | None,
              sbatch_lines: tuple[str, ...], setup: tuple[str, ...]) -> None:
    """A Slurm array (one task per shard) and a merge job after it: DIR/launch/eval.sbatch,
    merge.sbatch. --submit: sbatch both, the merge with --dependency=afterok on the array."""
    launch = _launch(ctx, eval_args, shards, out_dir, abduct, job_name, local=True)
    resources = SlurmResources(partition=partition, time=time_limit, gpus=gpus, cpus=cpus, mem=mem, account=account,
                               sbatch_lines=sbatch_lines, setup=setup)
    written = write_files(launch, "slurm", slurm_files(launch, resources), overwrite)
    eval_file, merge_file = (str(launch.files_dir / name) for name in JOB_FILES["slurm"])
    if not submit:
        _report("slurm", launch, written, as_json, {}, [
            f"submit: ARRAY=$(sbatch --parsable {_join([eval_file])}) && "
            f"sbatch --dependency=afterok:$ARRAY {_join([merge_file])}"])
        return
    array = run_client(["sbatch", "--parsable", eval_file]).strip().split(";")[0]
    merge = run_client(["sbatch", "--parsable", f"--dependency=afterok:{array}", merge_file]).strip().split(";")[0]
    _report("slurm", launch, written, as_json, {"array_job": array, "merge_job": merge}, [
        f"submitted array job {array} ({shards} tasks) and merge job {merge} (after it); "
        f"results: {launch.out / 'results.json'}"])


def _under(path: Path, mount: Path) -> bool:
    return path == mount or mount in path.parents


@launch_group.command("k8s")
@common_options
@click.option("--image", required=True, help="The container image (with abduct and the task's plugins installed).")
@click.option("--pvc", "claim", required=True, metavar="CLAIM",
              help="The PersistentVolumeClaim holding the data (--data) and DIR, mounted in every pod.")
@click.option("--mount", type=click.Path(path_type=Path), default=Path("/mnt/abduct"), show_default=True,
              help="Where the claim is mounted in the pods; DIR and --data must lie under it.")
@click.option("--namespace", default=None, help="The Jobs' namespace (default: kubectl's).")
@click.option("--gpus", type=click.IntRange(min=1), default=None, help="nvidia.com/gpu per pod.")
@click.option("--cpus", default=None, help="CPU per pod (requests = limits), e.g. 4.")
@click.option("--mem", default=None, help="Memory per pod (requests = limits), e.g. 32Gi.")
@click.option("--files", "files_at", type=click.Path(path_type=Path), default=None, metavar="FOLDER",
              help="Write the manifests here rather than into DIR/launch (where DIR is the pods' path only).")
@click.pass_context
def k8s_cmd(ctx: click.Context, shards: int, out_dir: Path, abduct: str | None, job_name: str | None,
            overwrite: bool, submit: bool, as_json: bool, eval_args: tuple[str, ...], image: str, claim: str,
            mount: Path, namespace: str | None, gpus: int | None, cpus: str | None, mem: str | None,
            files_at: Path | None) -> None:
    """A Kubernetes Indexed Job (one pod per shard) and a merge Job that waits for every shard:
    DIR/launch/job.yaml, merge-job.yaml (or --files FOLDER). --submit: kubectl apply -f both."""
    launch = _launch(ctx, eval_args, shards, out_dir, abduct, job_name, local=False, files_at=files_at)
    if not mount.is_absolute():
        raise AbductError(f"--mount {mount}: give the absolute path where the pods see the claim")
    args = launch.eval_args
    data = [args[i + 1] if arg == "--data" else arg.partition("=")[2]
            for i, arg in enumerate(args) if (arg == "--data" and i + 1 < len(args)) or arg.startswith("--data=")]
    for option, path in [("--out", launch.out), *(("--data", Path(p)) for p in data)]:
        if not _under(path, mount):
            raise AbductError(f"{option} {path} is not under --mount {mount}: the pods see only the claim {claim}")
    resources = KubernetesResources(image=image, claim=claim, mount=mount, namespace=namespace, gpus=gpus,
                                    cpus=cpus, mem=mem)
    written = write_files(launch, "k8s", kubernetes_files(launch, resources), overwrite)
    command = ["kubectl", "apply", *(arg for name in JOB_FILES["k8s"] for arg in ("-f", str(launch.files_dir / name)))]
    if not submit:
        _report("k8s", launch, written, as_json, {}, [f"submit: {_join(command)}"])
        return
    said = run_client(command)
    _report("k8s", launch, written, as_json, {"kubectl": said.strip().splitlines()},
            [*said.strip().splitlines(), f"results: {launch.out / 'results.json'} (in the claim {claim})"])


@launch_group.command("ray")
@common_options
@click.option("--cpus", type=click.FloatRange(min=0), default=1.0, show_default=True, help="CPUs per shard task.")
@click.option("--gpus", type=click.FloatRange(min=0), default=0.0, show_default=True, help="GPUs per shard task.")
@click.option("--address", default=None, help="The Ray cluster for ray job submit (default: RAY_ADDRESS).")
@click.pass_context
def ray_cmd(ctx: click.Context, shards: int, out_dir: Path, abduct: str | None, job_name: str | None,
            overwrite: bool, submit: bool, as_json: bool, eval_args: tuple[str, ...], cpus: float, gpus: float,
            address: str | None) -> None:
    """A Ray job script, DIR/launch/ray_job.py: one Ray task per shard, then the merge.
    --submit: ray job submit --working-dir DIR/launch -- python ray_job.py."""
    launch = _launch(ctx, eval_args, shards, out_dir, abduct, job_name, local=True)
    written = write_files(launch, "ray", ray_files(launch, RayResources(cpus=cpus, gpus=gpus)), overwrite)
    command = ["ray", "job", "submit", *(["--address", address] if address else []),
               "--working-dir", str(launch.files_dir), "--no-wait", "--", "python", JOB_FILES["ray"][0]]
    if not submit:
        _report("ray", launch, written, as_json, {}, [f"submit: {_join(command)}"])
        return
    said = run_client(command)
    _report("ray", launch, written, as_json, {"ray": said.strip().splitlines()},
            [*said.strip().splitlines(), f"results: {launch.out / 'results.json'}"])
