"""``abduct launch slurm|k8s|ray``: the files' content, the Slurm files run as Slurm's array runs
them (bash, the shard from SLURM_ARRAY_TASK_*; the real cluster is the integration's), the
Kubernetes YAML against the API's schema, the Ray script on a local Ray instance, submission
through fake clients recording their arguments, and the refusals. Every merged run is compared
with one process's."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from abduct.host import Registry
from abduct_testing import run_cli
from conftest import executable

TIMEOUT = 300


def _launch(*argv: str) -> tuple[int, str, str]:
    outcome = run_cli(["launch", *argv])
    assert outcome.crash is None, outcome.crash
    return outcome.code, outcome.out, outcome.err


def _eval_args(data: Path) -> list[str]:
    return ["toy-choice", "--model", "random", "--data", str(data), "--quiet", "--no-cache"]


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def _one_process(data: Path, out: Path) -> Path:
    outcome = run_cli(["eval", *_eval_args(data), "--out", str(out)])
    assert outcome.code == 0, outcome.err
    return out


def _same_run(one: Path, merged: Path) -> None:
    """Metrics, intervals, units and predictions (as sets: a merge orders them by the plan) equal."""
    a, b = (json.loads((d / "results.json").read_text()) for d in (one, merged))
    for key in ("task", "metrics", "intervals", "details", "inputs", "seed", "split"):
        assert a[key] == b[key], key
    assert b["shards"]
    lines = [(d / "predictions.jsonl").read_text().splitlines() for d in (one, merged)]
    assert len(lines[0]) == len(lines[1]) and set(lines[0]) == set(lines[1])
    assert (one / "units.json").read_text() == (merged / "units.json").read_text()


def _array_task(script: Path, index: int, count: int) -> subprocess.CompletedProcess[str]:
    """What a Slurm array task does with the script: runs it with the array's variables set."""
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": str(index), "SLURM_ARRAY_TASK_COUNT": str(count),
           "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": str(count - 1), "SLURM_ARRAY_JOB_ID": "7"}
    return subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=TIMEOUT)


def test_slurm_files_say_the_array_the_resources_and_the_shard_command(toy_registry: Registry, toy_data: Path,
                                                                         tmp_path: Path, toy_abduct: Path) -> None:
    out = tmp_path / "runs dir" / "toy"
    code, said, err = _launch(
        "slurm", "--shards", "3", "--out", str(out), "--abduct", str(toy_abduct), "--partition", "gpu",
        "--time", "01:00:00", "--gpus", "2", "--cpus", "4", "--mem", "16G", "--account", "lab",
        "--sbatch-line", "--constraint=a100", "--sbatch-line", "#SBATCH --exclusive", "--setup", "module load cuda",
        "--", *_eval_args(toy_data))
    assert code == 0, err
    text = (out / "launch" / "eval.sbatch").read_text()
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    for line in ("#SBATCH --job-name=abduct-toy-choice", "#SBATCH --array=0-2", "#SBATCH --partition=gpu",
                 "#SBATCH --time=01:00:00", "#SBATCH --gres=gpu:2", "#SBATCH --cpus-per-task=4",
                 "#SBATCH --mem=16G", "#SBATCH --account=lab", "#SBATCH --constraint=a100", "#SBATCH --exclusive",
                 f'#SBATCH --output="{out}/launch/logs/eval-%A_%a.out"', "module load cuda"):
        assert line in lines, line
    assert lines.index("module load cuda") < len(lines) - 1
    # the shard command, as the shell splits it: absolute, quoted paths (spaces in three of them)
    words = shlex.split(lines[-1].replace('"$SLURM_ARRAY_TASK_ID"', "1"))
    assert words == [str(toy_abduct), "eval", *_eval_args(toy_data), "--shard", "auto", "--shards", "3",
                     "--out", f"{out}/shards/shard-1"]
    merge = (out / "launch" / "merge.sbatch").read_text().splitlines()
    assert "#SBATCH --job-name=abduct-toy-choice-merge" in merge and "#SBATCH --partition=gpu" in merge
    assert not any("--gres" in line or "--array" in line for line in merge)
    assert shlex.split(merge[-1]) == ["exec", str(toy_abduct), "merge", str(out),
                                      *(f"{out}/shards/shard-{i}" for i in range(3))]
    assert (out / "launch" / "logs").is_dir()
    assert "sbatch --dependency=afterok:$ARRAY" in said


def test_slurm_files_run_as_an_array_resume_and_merge_to_one_processs_run(toy_registry: Registry, toy_data: Path,
                                                                            tmp_path: Path, toy_abduct: Path) -> None:
    out = tmp_path / "runs dir" / "toy"
    assert _launch("slurm", "--shards", "3", "--out", str(out), "--abduct", str(toy_abduct), "--",
                   *_eval_args(toy_data))[0] == 0
    script, merge = out / "launch" / "eval.sbatch", out / "launch" / "merge.sbatch"
    for index in (0, 1):
        done = _array_task(script, index, 3)
        assert done.returncode == 0, done.stderr
    # the merge job before shard 2 has finished: one line naming it
    failed = subprocess.run(["bash", str(merge)], capture_output=True, text=True, timeout=TIMEOUT)
    assert failed.returncode == 2
    assert _one_error_line(failed.stderr) == f"error: shard folder not found: {out}/shards/shard-2"
    assert not (out / "results.json").exists()
    # the array resubmitted: finished shards keep their units (eval's resume), the missing one runs
    records = (out / "shards" / "shard-0" / "records.jsonl").read_text()
    for index in range(3):
        done = _array_task(script, index, 3)
        assert done.returncode == 0, done.stderr
    assert (out / "shards" / "shard-0" / "records.jsonl").read_text() == records
    assert json.loads((out / "shards" / "shard-2" / "shard.json").read_text())["shard"]["count"] == 3
    merged = subprocess.run(["bash", str(merge)], capture_output=True, text=True, timeout=TIMEOUT)
    assert merged.returncode == 0, merged.stderr
    _same_run(_one_process(toy_data, tmp_path / "one"), out)


def _fake_sbatch(folder: Path) -> Path:
    calls = folder / "sbatch-calls.jsonl"
    executable(folder / "sbatch", f"""#!{sys.executable}
import json, sys
from pathlib import Path
calls = Path({str(calls)!r})
n = len(calls.read_text().splitlines()) if calls.exists() else 0
with calls.open("a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
print(f"{{4242 + n}};cluster" if n % 2 == 0 else 4242 + n)
""")
    return calls


def test_slurm_submit_queues_the_merge_after_the_array_and_a_rerun_submits_again(
        toy_registry: Registry, toy_data: Path, tmp_path: Path, toy_abduct: Path, fake_path: Path) -> None:
    calls = _fake_sbatch(fake_path)
    out = tmp_path / "runs dir" / "toy"
    argv = ["slurm", "--shards", "2", "--out", str(out), "--abduct", str(toy_abduct), "--submit", "--json", "--",
            *_eval_args(toy_data)]
    code, said, err = _launch(*argv)
    assert code == 0, err
    eval_file, merge_file = str(out / "launch" / "eval.sbatch"), str(out / "launch" / "merge.sbatch")
    assert json.loads(said) == {"engine": "slurm", "array_job": "4242", "merge_job": "4243",
                                "files": [eval_file, merge_file], "out": str(out)}
    assert [json.loads(line) for line in calls.read_text().splitlines()] == [
        ["--parsable", eval_file], ["--parsable", "--dependency=afterok:4242", merge_file]]
    # the same launch again: the same files, submitted again (the shards' resume keeps finished work)
    code, said, err = _launch(*argv[:-len(_eval_args(toy_data)) - 2], "--", *_eval_args(toy_data))
    assert code == 0, err
    assert "array job 4244 (2 tasks) and merge job 4245" in said
    assert json.loads(calls.read_text().splitlines()[-1]) == ["--parsable", "--dependency=afterok:4244", merge_file]


def test_a_failing_or_missing_sbatch_is_one_line(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                                 toy_abduct: Path, fake_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["slurm", "--shards", "2", "--out", str(tmp_path / "r"), "--abduct", str(toy_abduct), "--submit", "--",
            *_eval_args(toy_data)]
    executable(fake_path / "sbatch", "#!/bin/sh\necho 'sbatch: error: invalid partition specified: gpu' >&2\nexit 1\n")
    code, _, err = _launch(*argv)
    assert code == 2 and "invalid partition specified: gpu" in _one_error_line(err)
    (fake_path / "sbatch").unlink()
    monkeypatch.setenv("PATH", str(fake_path))  # no sbatch at all (this machine may have one)
    code, _, err = _launch(*argv)
    assert code == 2 and "sbatch is not on PATH" in _one_error_line(err)


def test_kubernetes_manifests_are_schema_valid_and_their_commands_merge_to_one_processs_run(
        toy_registry: Registry, toy_data: Path, tmp_path: Path, toy_abduct: Path, fake_path: Path) -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    yaml = pytest.importorskip("yaml")
    out = tmp_path / "runs" / "toy run"  # the claim is mounted at tmp_path, as the pods would see it
    argv = ["k8s", "--shards", "3", "--out", str(out), "--image", "registry.example/abduct:0.2", "--pvc", "abduct-data",
            "--mount", str(tmp_path), "--namespace", "eval", "--gpus", "1", "--cpus", "4", "--mem", "24Gi",
            "--abduct", str(toy_abduct), "--", *_eval_args(toy_data)]
    code, _, err = _launch(*argv)
    assert code == 0, err
    job, merge = (yaml.safe_load((out / "launch" / name).read_text()) for name in ("job.yaml", "merge-job.yaml"))
    for version in ("1.28", kubernetes_validate.latest_version()):
        for manifest in (job, merge):
            kubernetes_validate.validate(manifest, version, strict=True)  # raises ValidationError when invalid
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 3, 3)
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    assert container["image"] == "registry.example/abduct:0.2"
    assert container["command"] == [str(toy_abduct), "eval", *_eval_args(toy_data), "--shard", "auto", "--shards",
                                    "3", "--out", f"{out}/shards/shard-$(JOB_COMPLETION_INDEX)"]
    assert container["resources"]["limits"] == {"cpu": "4", "memory": "24Gi", "nvidia.com/gpu": 1}
    assert container["volumeMounts"] == [{"name": "abduct", "mountPath": str(tmp_path)}]
    assert pod["volumes"] == [{"name": "abduct", "persistentVolumeClaim": {"claimName": "abduct-data"}}]
    assert job["metadata"]["namespace"] == "eval"
    # a wrong field is caught by the validation (so that passing it means something)
    spec["completionMode"] = 4
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, kubernetes_validate.latest_version(), strict=True)

    # what the pods run, run here: each index as Kubernetes expands $(JOB_COMPLETION_INDEX) and sets
    # the variable, then the merge pod's script (every shard there: it does not wait)
    for index in range(3):
        command = [word.replace("$(JOB_COMPLETION_INDEX)", str(index)) for word in container["command"]]
        done = subprocess.run(command, env={**os.environ, "JOB_COMPLETION_INDEX": str(index)}, capture_output=True,
                              text=True, timeout=TIMEOUT)
        assert done.returncode == 0, done.stderr
    script = merge["spec"]["template"]["spec"]["containers"][0]["command"]
    assert script[:2] == ["/bin/sh", "-c"]
    done = subprocess.run(script, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    _same_run(_one_process(toy_data, tmp_path / "one"), out)

    # --submit: kubectl apply -f both (a fake kubectl: only the arguments are checked, nothing is applied)
    calls = fake_path / "kubectl-calls"
    executable(fake_path / "kubectl", f'#!/bin/sh\nprintf "%s\\n" "$@" > {shlex.quote(str(calls))}\n'
                                      'echo "job.batch/abduct-toy-choice created"\n')
    code, said, err = _launch(*argv[:-len(_eval_args(toy_data)) - 1], "--submit", "--", *_eval_args(toy_data))
    assert code == 0, err
    assert calls.read_text().splitlines() == ["apply", "-f", str(out / "launch" / "job.yaml"),
                                              "-f", str(out / "launch" / "merge-job.yaml")]
    assert "job.batch/abduct-toy-choice created" in said


def test_the_kubernetes_merge_waits_for_every_shards_manifest(toy_registry: Registry, tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    out = tmp_path / "r"
    assert _launch("k8s", "--shards", "2", "--out", str(out), "--image", "i", "--pvc", "c", "--mount", str(tmp_path),
                   "--abduct", "true", "--", "toy-choice", "--model", "random", "--data", str(tmp_path))[0] == 0
    script = yaml.safe_load((out / "launch" / "merge-job.yaml").read_text())["spec"]["template"]["spec"][
        "containers"][0]["command"]
    (out / "shards" / "shard-0").mkdir(parents=True)
    (out / "shards" / "shard-0" / "shard.json").write_text("{}")
    waiting = subprocess.Popen(script, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with pytest.raises(subprocess.TimeoutExpired):  # shard 1 has not finished: it waits
        waiting.wait(timeout=2)
    waiting.kill()
    waiting.wait()


def test_the_ray_job_runs_each_shard_on_a_local_ray_instance_and_merges(toy_registry: Registry, toy_data: Path,
                                                                       tmp_path: Path, toy_abduct: Path) -> None:
    pytest.importorskip("ray")
    out = tmp_path / "runs dir" / "toy"
    code, said, err = _launch("ray", "--shards", "3", "--out", str(out), "--abduct", str(toy_abduct), "--",
                              *_eval_args(toy_data))
    assert code == 0, err
    assert "ray job submit --working-dir" in said
    script = out / "launch" / "ray_job.py"
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_DEDUP_LOGS": "0"}
    env.pop("RAY_ADDRESS", None)  # a local instance, started by ray.init() and stopped when the job ends
    # shard 1 fails: the job names it, exits 1 and does not merge
    fail = toy_abduct.parent / "fail-shard-1-of-3"
    fail.touch()
    done = subprocess.run([sys.executable, script.name], cwd=script.parent, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 1
    assert "error: shard 1/3 (exit 3) failed; rerun this job to resume" in done.stderr.splitlines()
    assert not (out / "results.json").exists() and (out / "shards" / "shard-2" / "shard.json").is_file()
    # the job again: the failed shard runs, the finished ones are not evaluated again, and the merge
    finished = {i: (out / "shards" / f"shard-{i}" / "records.jsonl").stat().st_mtime_ns for i in (0, 2)}
    fail.unlink()
    done = subprocess.run([sys.executable, script.name], cwd=script.parent, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert {i: (out / "shards" / f"shard-{i}" / "records.jsonl").stat().st_mtime_ns for i in (0, 2)} == finished
    for i in range(3):
        assert json.loads((out / "shards" / f"shard-{i}" / "shard.json").read_text())["shard"]["index"] == i
    _same_run(_one_process(toy_data, tmp_path / "one"), out)


def test_ray_submit_hands_the_script_to_ray_job_submit(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                                       toy_abduct: Path, fake_path: Path) -> None:
    calls = fake_path / "ray-calls"
    executable(fake_path / "ray", f'#!/bin/sh\nprintf "%s\\n" "$@" > {shlex.quote(str(calls))}\n'
                                  "echo \"Job 'raysubmit_1' submitted successfully\"\n")
    out = tmp_path / "r"
    code, said, err = _launch("ray", "--shards", "2", "--out", str(out), "--address", "http://head:8265",
                              "--abduct", str(toy_abduct), "--submit", "--", *_eval_args(toy_data))
    assert code == 0, err
    assert calls.read_text().splitlines() == ["job", "submit", "--address", "http://head:8265", "--working-dir",
                                              str(out / "launch"), "--no-wait", "--", "python", "ray_job.py"]
    assert "raysubmit_1" in said


@pytest.mark.parametrize(("args", "says"), [
    (["--out", "x"], "--out among the arguments of abduct eval"),
    (["--shard", "0/2"], "--shard among the arguments of abduct eval"),
    (["--shards=2"], "--shards among the arguments of abduct eval"),
])
def test_eval_args_the_launcher_sets_are_refused_before_anything_is_written(
        toy_registry: Registry, toy_data: Path, tmp_path: Path, args: list[str], says: str) -> None:
    for engine in ("slurm", "ray"):
        code, _, err = _launch(engine, "--shards", "2", "--out", str(tmp_path / "r"), "--",
                               *_eval_args(toy_data), *args)
        assert code == 2 and says in _one_error_line(err)
    assert not (tmp_path / "r").exists()


def test_a_task_no_plugin_registers_or_none_is_refused(toy_registry: Registry, toy_data: Path,
                                                       tmp_path: Path) -> None:
    code, _, err = _launch("slurm", "--shards", "2", "--out", str(tmp_path / "r"), "--",
                           "toy-choise", "--model", "random", "--data", str(toy_data))
    assert code == 2 and "toy-choise" in _one_error_line(err)
    code, _, err = _launch("slurm", "--shards", "2", "--out", str(tmp_path / "r"), "--",
                           "--model", "random", "--data", str(toy_data))
    assert code == 2 and "no task" in _one_error_line(err)
    assert not (tmp_path / "r").exists()


def test_another_launchs_files_are_refused_unless_overwrite(toy_registry: Registry, toy_data: Path,
                                                            tmp_path: Path, toy_abduct: Path) -> None:
    out = tmp_path / "r"
    base = ["--out", str(out), "--abduct", str(toy_abduct)]
    assert _launch("slurm", "--shards", "2", *base, "--", *_eval_args(toy_data))[0] == 0
    assert _launch("slurm", "--shards", "2", *base, "--", *_eval_args(toy_data))[0] == 0  # the same: fine
    code, _, err = _launch("slurm", "--shards", "3", *base, "--", *_eval_args(toy_data))
    assert code == 2 and "holds the files of another launch (eval.sbatch, merge.sbatch)" in _one_error_line(err)
    code, _, err = _launch("ray", "--shards", "2", *base, "--", *_eval_args(toy_data))
    assert code == 2 and "another launch" in _one_error_line(err)
    assert "--array=0-1" in (out / "launch" / "eval.sbatch").read_text()
    assert _launch("ray", "--shards", "2", *base, "--overwrite", "--", *_eval_args(toy_data))[0] == 0
    assert sorted(p.name for p in (out / "launch").iterdir()) == ["logs", "ray_job.py"]


def test_kubernetes_paths_outside_the_claim_are_refused(toy_registry: Registry, tmp_path: Path) -> None:
    base = ["k8s", "--shards", "2", "--image", "i", "--pvc", "c", "--mount", "/mnt/abduct"]
    code, _, err = _launch(*base, "--out", str(tmp_path / "r"), "--", "toy-choice", "--model", "random",
                           "--data", "/mnt/abduct/toy")
    assert code == 2 and f"--out {tmp_path / 'r'} is not under --mount /mnt/abduct" in _one_error_line(err)
    code, _, err = _launch(*base, "--out", "/mnt/abduct/r", "--", "toy-choice", "--model", "random",
                           "--data=/data/toy")
    assert code == 2 and "--data /data/toy is not under --mount /mnt/abduct" in _one_error_line(err)
    assert not (tmp_path / "r").exists() and not Path("/mnt/abduct/r").exists()


def test_kubernetes_manifests_go_to_files_where_dir_is_the_pods_only(toy_registry: Registry,
                                                                    tmp_path: Path) -> None:
    code, said, err = _launch("k8s", "--shards", "2", "--image", "i", "--pvc", "c", "--out", "/mnt/abduct/r",
                              "--files", str(tmp_path / "manifests"), "--", "toy-choice", "--model", "random",
                              "--data", "/mnt/abduct/toy")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "manifests").iterdir()) == ["job.yaml", "merge-job.yaml"]
    assert "/mnt/abduct/r/shards/shard-$(JOB_COMPLETION_INDEX)" in (tmp_path / "manifests" / "job.yaml").read_text()
    assert f"kubectl apply -f {tmp_path / 'manifests' / 'job.yaml'}" in said
    assert not Path("/mnt/abduct").exists()
