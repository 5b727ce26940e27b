"""Run every benchmark script several times and keep the median, min and max of each figure.

    python benchmarks/run_all.py [--quick] [--repeats 3] [--only NAME ...] [--out benchmarks/results.json]

Each script runs ``--repeats`` times in its own process with ``--json``; every number in its
report becomes a figure (a dotted path such as ``scoring.speedup``), kept as the median of the
runs with their min and max and every run's value. ``--quick`` passes each script smaller
sizes (``QUICK`` below; the same ratios on less work, so noisier). The machine (cores,
platform, Python, torch) and the 1-minute load average around each run are written beside
the figures: timings on a shared machine move with its load, which is why the project
compares ratios measured within one run rather than seconds.

A script that fails is recorded with its error and the others still run; the exit code is 1
if any failed. ``./dev bench`` runs this in the environment ``./dev demo`` builds.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# The arguments of a --quick run, per script (a full run uses each script's own defaults).
QUICK: dict[str, list[str]] = {
    "caption_metrics": ["--n", "300", "--loop-sample", "3", "--bertscore-pairs", "8", "--repeat", "1",
                        "--reuse-evaluations", "3"],
    "cascade": ["--chunk", "24", "--k", "4", "--steps", "10", "--dual-steps", "10"],
    "cli_startup": ["--runs", "3"],
    "clip_eval": ["--models", "clip:tiny", "--chunk", "60", "--small-chunk", "12"],
    "sharded_eval": ["--images", "16", "--chunk-size", "8", "--model", "clip:tiny"],
    "sherlock_scoring": ["--chunks", "3"],
    "t5_scoring": ["--pairs", "64", "--requests", "16", "--max-new-tokens", "8", "--repeats", "1"],
    "video_sampling": ["--videos", "2", "--seconds", "4", "--width", "160", "--height", "120", "--clips", "16",
                       "--repeat", "1", "--memory-clips", "30"],
    "vlm_generation": ["--requests", "4", "--batch", "2", "--tokens", "4", "--repeats", "1", "--limits", "1", "4",
                       "--served-requests", "8"],
    "whoops": ["--images", "24", "--repeat", "1"],
    "intervals": ["--images", "40", "--repeats", "1", "--units", "2000", "--examples", "40"],
    "lmms_adapter": ["--samples", "4", "--max-new-tokens", "2", "--repeat", "1"],
    "shard_merge": ["--units", "2000", "--repeats", "1"],
    "merge_scaling": ["--units", "5000", "--repeats", "3"],
    "blackswan_frames": ["--videos", "8", "--repeat", "1"],
    "clustered_bootstrap": ["--repeats", "3"],
    "served_throughput": ["--requests", "60", "--rounds", "1", "--overhead-requests", "500", "--repeats", "3"],
}
SCRIPTS = tuple(QUICK)

# The figures the final table shows (fnmatch patterns over the dotted paths); the JSON has all.
HEADLINES: dict[str, tuple[str, ...]] = {
    "caption_metrics": ("*.overhead", "cider.speedup", "meteor_reuse.speedup", "bertscore.sentences_per_s"),
    "cascade": ("pass_ratio", "time_ratio", "p_at_1_difference"),
    "cli_startup": ("ratio", "abduct_help_seconds"),
    "clip_eval": ("models.*.overhead", "pairwise.speedup"),
    "sharded_eval": ("wall_speedup", "model_speedup"),
    "sherlock_scoring": ("one_chunk.speedup", "run.speedup"),
    "t5_scoring": ("scoring.speedup", "generation.overhead"),
    "video_sampling": ("overhead_1_worker_*", "speedup_vs_pyav_loop"),
    "vlm_generation": ("local.overhead_vs_direct_batched", "local.speedup_vs_one_at_a_time"),
    "whoops": ("*.ratio",),
    "intervals": ("retrieval.ratio", "retrieval.interval_seconds", "var.ratio"),
    "lmms_adapter": ("overhead", "overhead_fastest"),
    "shard_merge": ("merge_share", "merge_reading_share", "shards_over_whole"),
    "merge_scaling": ("ratio", "per_extra_shard_ms"),
    "blackswan_frames": ("speedup", "run.total_over_model"),
    "clustered_bootstrap": ("cost.ratio", "cost.paired_ratio"),
    "served_throughput": ("replicas.vs_*", "auto.vs_best_fixed", "grouping.speedup", "overhead.overhead"),
}


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of a JSON report by dotted path (list items by position)."""
    items: list[tuple[str, Any]]
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        items = [(str(i), v) for i, v in enumerate(value)]
    else:
        return {prefix: value}
    out: dict[str, Any] = {}
    for key, child in items:
        out.update(flatten(child, f"{prefix}.{key}" if prefix else key))
    return out


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_report(stdout: str) -> dict[str, Any]:
    """The script's JSON report: its whole output, or from the first line that opens an object
    (a library may print a line of its own before it)."""
    lines = stdout.splitlines()
    for start, line in enumerate(lines):
        if line.startswith("{"):
            report = json.loads("\n".join(lines[start:]))
            if isinstance(report, dict):
                return report
    raise ValueError(f"no JSON object in the output: {stdout[-300:]!r}")


def run_once(name: str, args: list[str], timeout: float, env: dict[str, str]) -> tuple[dict[str, Any], float]:
    command = [sys.executable, str(HERE / f"{name}.py"), "--json", *args]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, env=env)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"timed out after {timeout:.0f} s") from exc
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"exit code {done.returncode}: {tail}")
    return parse_report(done.stdout), seconds


def summarise(reports: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(figures: median/min/max/runs of every number, facts: every other leaf, one value if the
    runs agree, else the list of values)."""
    flat = [flatten(r) for r in reports]
    keys = list(dict.fromkeys(k for f in flat for k in f))
    figures: dict[str, Any] = {}
    facts: dict[str, Any] = {}
    for key in keys:
        values = [f[key] for f in flat if key in f]
        if all(is_number(v) for v in values):
            figures[key] = {"median": statistics.median(values), "min": min(values), "max": max(values),
                            "runs": values}
        else:
            facts[key] = values[0] if all(v == values[0] for v in values) else values
    return figures, facts


def bench(name: str, args: list[str], repeats: int, timeout: float, env: dict[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": ["python", f"benchmarks/{name}.py", "--json", *args],
                             "seconds": [], "load_1min": []}
    reports = []
    for run in range(repeats):
        load_before = os.getloadavg()[0]
        try:
            report, seconds = run_once(name, args, timeout, env)
        except (RuntimeError, ValueError) as exc:
            entry["error"] = f"run {run + 1}: {exc}"
            break
        reports.append(report)
        entry["seconds"].append(round(seconds, 2))
        entry["load_1min"].append(round((load_before + os.getloadavg()[0]) / 2, 2))
        print(f"  {name} run {run + 1}/{repeats}: {seconds:.1f} s", file=sys.stderr, flush=True)
    entry["ok"] = "error" not in entry
    entry["runs"] = len(reports)
    entry["figures"], entry["facts"] = summarise(reports)
    return entry


def machine(env: dict[str, str]) -> dict[str, Any]:
    try:
        torch = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch = None
    return {"cpu_count": os.cpu_count(), "platform": platform.platform(), "machine": platform.machine(),
            "python": platform.python_version(), "torch": torch,
            "omp_num_threads": env.get("OMP_NUM_THREADS")}


def table(results: dict[str, Any]) -> str:
    rows = [("script", "figure", "median", "min", "max", "load")]
    for name, entry in results["scripts"].items():
        if not entry["ok"]:
            rows.append((name, "FAILED", "", "", "", entry["error"].splitlines()[0][:60]))
        load = f"{statistics.median(entry['load_1min']):.1f}" if entry["load_1min"] else ""
        for key, fig in entry["figures"].items():
            if any(fnmatch.fnmatchcase(key, p) for p in HEADLINES.get(name, ())):
                rows.append((name, key, f"{fig['median']:.3g}", f"{fig['min']:.3g}", f"{fig['max']:.3g}", load))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                     for r in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (QUICK in this file)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each script (default 3)")
    parser.add_argument("--only", nargs="+", choices=SCRIPTS, metavar="NAME", help=f"among: {', '.join(SCRIPTS)}")
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds one run may take")
    parser.add_argument("--threads", type=int, default=None,
                        help="OMP_NUM_THREADS and MKL_NUM_THREADS of the scripts (default: as the environment has them)")
    args = parser.parse_args(argv)
    if args.repeats < 1 or (args.threads is not None and args.threads < 1):
        parser.error("--repeats and --threads must be at least 1")
    env = dict(os.environ)
    if args.threads is not None:
        # torch's intra-op pool on a shared, oversubscribed machine: see benchmarks/README.md (T5)
        env.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    started = datetime.datetime.now(datetime.UTC)
    results: dict[str, Any] = {
        "date": started.date().isoformat(), "started": started.isoformat(timespec="seconds"),
        "quick": args.quick, "repeats": args.repeats, "machine": machine(env),
        "load_average_start": list(os.getloadavg()), "scripts": {},
    }
    for name in args.only or SCRIPTS:
        print(f"{name} ({args.repeats} runs{', quick' if args.quick else ''})", file=sys.stderr, flush=True)
        results["scripts"][name] = bench(name, QUICK[name] if args.quick else [], args.repeats, args.timeout, env)
    results["load_average_end"] = list(os.getloadavg())
    results["failed"] = [name for name, entry in results["scripts"].items() if not entry["ok"]]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    partial = args.out.with_name(args.out.name + ".part")
    partial.write_text(json.dumps(results, indent=1) + "\n")
    partial.replace(args.out)  # whole or not at all
    print(table(results))
    print(f"{args.out} ({results['machine']['cpu_count']} CPUs, load {results['load_average_start'][0]:.1f} -> "
          f"{results['load_average_end'][0]:.1f}); failed: {', '.join(results['failed']) or 'none'}")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
