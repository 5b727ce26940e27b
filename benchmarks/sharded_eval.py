"""Sharded evaluation: one `abduct eval` with 1 process and with 2 processes under torchrun
(gloo on CPU), on the same synthetic Sherlock corpus; the speed-up and whether the metrics and
predictions.jsonl are identical. All figures come from one run of this script.

    python benchmarks/sharded_eval.py [--images 120] [--chunk-size 60] [--model clip:ViT-B-32] [--threads 1] [--json]

Each process gets ``--threads`` intra-op threads (OMP_NUM_THREADS), so 2 processes use twice
the cores of one: the ratio is what splitting the work buys on as many more cores. The wall
time includes each process's start-up (imports, model build), which sharding does not split;
"model s" is the time rank 0 spent inside the model, which it does.
With a GPU (``--device cuda``) the same comparison runs on GPUs instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _abduct() -> str:
    found = shutil.which("abduct") or str(Path(sys.executable).with_name("abduct"))
    if not Path(found).exists():
        raise SystemExit("abduct is not installed in this environment")
    return found


def run(processes: int, args: list[str], threads: int) -> tuple[float, dict]:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    launcher = [sys.executable, _abduct()]
    if processes > 1:
        launcher = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(processes),
                    "--master-addr", "127.0.0.1", "--master-port", str(_port()), _abduct()]
    start = time.perf_counter()
    done = subprocess.run([*launcher, *args], capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{processes} process(es) failed:\n{done.stderr[-3000:]}")
    out = Path(args[args.index("--out") + 1])
    return seconds, json.loads((out / "results.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=120)
    parser.add_argument("--chunk-size", type=int, default=60)
    parser.add_argument("--model", default="clip:ViT-B-32")  # random weights: no download, real cost
    parser.add_argument("--task", default="sherlock-retrieval")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    from abduct_sherlock.synth import synthesize

    with tempfile.TemporaryDirectory() as tmp:
        data = synthesize(Path(tmp) / "data", images=options.images, seed=0, chunk_instances=options.chunk_size)
        rows = []
        predictions = []
        for processes in (1, 2):
            out = Path(tmp) / f"out{processes}"
            args = ["eval", options.task, "--model", options.model, "--data", str(data), "--out", str(out),
                    "--quiet", "--no-cache", "--batch-size", str(options.batch_size), "--device", options.device]
            seconds, results = run(processes, args, options.threads)
            rows.append((processes, seconds, results["timings"]["model_seconds"], results["metrics"]))
            predictions.append((out / "predictions.jsonl").read_bytes())
        instances = rows[0][3].get("instances", "?")
        if options.json:
            print(json.dumps({
                "task": options.task, "model": options.model, "instances": instances, "threads": options.threads,
                **{f"processes_{p}": {"wall_seconds": w, "model_seconds": m} for p, w, m, _ in rows},
                "wall_speedup": rows[0][1] / rows[1][1], "model_speedup": rows[0][2] / rows[1][2],
                "metrics_equal": rows[0][3] == rows[1][3], "predictions_identical": predictions[0] == predictions[1],
            }, indent=2))
            return
        print(f"{options.task}, {options.model}, {instances} instances, {options.images} images, "
              f"device {options.device}, {options.threads} thread(s) per process")
        print(f"{'processes':>9}  {'wall s':>8}  {'wall speed-up':>13}  {'model s (rank 0)':>16}  {'model speed-up':>14}")
        for processes, seconds, model_seconds, _ in rows:
            print(f"{processes:>9}  {seconds:8.1f}  {rows[0][1] / seconds:13.2f}  {model_seconds:16.1f}  "
                  f"{rows[0][2] / model_seconds:14.2f}")
        print(f"metrics equal: {rows[0][3] == rows[1][3]}; predictions.jsonl byte-identical: "
              f"{predictions[0] == predictions[1]}")


if __name__ == "__main__":
    main()
