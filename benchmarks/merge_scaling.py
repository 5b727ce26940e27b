"""Does ``abduct merge`` scale with the run's units and not with its shards? The same run
merged from few shards and from many, timed against each other.

    python benchmarks/merge_scaling.py [--units 50000] [--shards 4,64] [--repeats 3] [--model random]
                                       [--profile N] [--json]

The task is shard_merge.py's generated multiple choice (``--units`` questions, one per stored
unit), evaluated through the ordinary runner in this process, caches off, with ``--model``
(default ``random``: no model work, so the merge is as large a part of the work as it gets).

1. The run is evaluated once whole: the reference.
2. For each count in ``--shards`` (default 4 and 64) the run is evaluated as that many shards,
   one after the other, each into its own folder (their time is not what is measured).
3. Each count's shards are merged ``--repeats`` times (``merge_shards``, what ``abduct merge``
   runs, in this process: a new process's imports would add the same seconds to both), the
   counts alternating (forwards, then backwards, ...) so that a change in the machine's load
   falls on all of them; the median merge of each count is reported, and the ratio of the most
   shards' to the fewest shards' median
   (the goal: at most 1.5: merging costs what the run's units cost, not a price per shard).
   Every merged output is checked against the whole run's: results.json's metrics and intervals
   equal, predictions.jsonl the same lines in the same order; the script fails otherwise.

``--profile N`` runs one more merge of the most shards under cProfile after the timings and
prints its N costliest functions (by cumulative time) to stderr.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from shard_merge import BenchPlugin, write_data  # beside this script: its generated task

import abduct._run.merge as merge
from abduct._run.shards import Shard  # internal: the shard key
from abduct.host import EvalConfig, build_registry, run_evaluation

GOAL = 1.5


def parse_counts(text: str) -> list[int]:
    try:
        counts = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected shard counts such as 4,64, got '{text}'") from None
    if len(counts) < 2 or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"expected two or more shard counts of at least 1, got '{text}'")
    return counts


def same_outputs(merged: dict[str, Any], out: Path, whole: Path) -> bool:
    reference = json.loads((whole / "results.json").read_text())
    return (merged["metrics"] == reference["metrics"] and merged["intervals"] == reference["intervals"]
            and (out / "predictions.jsonl").read_bytes() == (whole / "predictions.jsonl").read_bytes())


def measure(model: str, units: int, counts: list[int], repeats: int, root: Path, registry: Any,
            profile: int) -> dict[str, Any]:
    data = write_data(root / "data", units)

    def evaluate(out: Path, shard: Shard | None = None) -> float:
        started = time.perf_counter()
        run_evaluation(EvalConfig("bench-choice", model, data, out, quiet=True, use_cache=False, shard=shard),
                       registry)
        return time.perf_counter() - started

    warm = write_data(root / "warm-data", 50)  # imports (the model's, plots, intervals) paid before any timing
    run_evaluation(EvalConfig("bench-choice", model, warm, root / "warm", quiet=True, use_cache=False), registry)
    whole_seconds = evaluate(root / "whole")
    folders = {n: [root / f"shards-{n}" / f"shard-{i}" for i in range(n)] for n in counts}
    shard_seconds = {n: sum(evaluate(folder, Shard(i, n)) for i, folder in enumerate(folders[n])) for n in counts}

    def merged(n: int, out: Path) -> float:
        started = time.perf_counter()
        results = merge.merge_shards(out, folders[n], quiet=True, use_cache=False, registry=registry)
        seconds = time.perf_counter() - started
        if not same_outputs(results, out, root / "whole"):
            raise SystemExit(f"merging {n} shards of {model}'s run differs from the whole run")
        shutil.rmtree(out)
        return seconds

    timings: dict[int, list[float]] = {n: [] for n in counts}
    for repeat in range(repeats):
        for n in counts if repeat % 2 == 0 else reversed(counts):
            timings[n].append(merged(n, root / f"merged-{n}"))
    medians = {n: statistics.median(timings[n]) for n in counts}
    fewest, most = counts[0], counts[-1]
    report: dict[str, Any] = {
        "model": model, "units": units, "shards": counts, "repeats": repeats,
        "whole_seconds": whole_seconds,
        "merge_seconds": {str(n): medians[n] for n in counts},
        "merge_rounds": {str(n): timings[n] for n in counts},
        "shards_eval_seconds": {str(n): shard_seconds[n] for n in counts},
        "ratio": medians[most] / medians[fewest],
        "per_extra_shard_ms": 1000 * (medians[most] - medians[fewest]) / (most - fewest),
        "goal": GOAL,
        "merged_equals_whole": True,
    }
    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        merged(most, root / "profiled")
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(profile)
        print(f"cProfile of merging {most} shards:\n{text.getvalue()}", file=sys.stderr)
    return report


def describe(report: dict[str, Any]) -> list[str]:
    counts = report["shards"]
    fewest, most = counts[0], counts[-1]
    lines = [f"{report['units']} units, model {report['model']}; whole run {report['whole_seconds']:.2f} s; "
             f"medians of {report['repeats']} merges per count, the counts alternating"]
    for n in counts:
        rounds = ", ".join(f"{s:.2f}" for s in report["merge_rounds"][str(n)])
        lines.append(f"  {n} shards (evaluated in {report['shards_eval_seconds'][str(n)]:.2f} s): merge "
                     f"{report['merge_seconds'][str(n)]:.2f} s (rounds {rounds} s)")
    lines.append(f"merge of {most} / merge of {fewest}: {report['ratio']:.2f} (goal: at most {report['goal']}); "
                 f"{report['per_extra_shard_ms']:.1f} ms per extra shard; every merged output equals the whole run's")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=50_000)
    parser.add_argument("--shards", type=parse_counts, default=[4, 64], metavar="N,M",
                        help="the shard counts to compare, comma-separated (default: 4,64)")
    parser.add_argument("--repeats", type=int, default=3, help="merges per count, alternating; medians")
    parser.add_argument("--model", default="random", metavar="SPEC")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile one more merge of the most shards; print its N costliest functions")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    registry = build_registry(extra_plugins=[("bench", BenchPlugin())])
    with tempfile.TemporaryDirectory() as tmp:
        report = measure(args.model, args.units, args.shards, args.repeats, Path(tmp), registry, args.profile)
    print(json.dumps(report, indent=2) if args.json else "\n".join(describe(report)))


if __name__ == "__main__":
    main()
