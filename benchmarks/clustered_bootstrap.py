"""What does the cluster bootstrap cost against the unit bootstrap, and what does it change?

1. Cost: one 95% interval (1,000 resamples) of a per-unit mean over ``--units`` units (10,000 by
   default) in ``--clusters`` clusters (1,000), clustered (``UnitScores.clustered``: whole
   clusters drawn, the ratio estimator) and not, interleaved ``--repeats`` times; the ratio of
   the medians (goal: at most 2). The units of a cluster share their value, so the widths show
   what clustering does where a cluster's units agree. The same for ``abduct compare``'s paired
   test (paired bootstrap and sign-flip permutation) against a second such run.
2. ``--run DIR ...``: for each metric of a finished run whose units have clusters (its
   units.json), the interval's width with and without them, on the same units and seed.

Usage: python benchmarks/clustered_bootstrap.py [--units 10000] [--clusters 1000] [--repeats 5]
[--run RUN_DIR ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any


def cost(units: int, clusters: int, repeats: int, resamples: int) -> dict[str, Any]:
    import numpy as np

    from abduct import UnitScores
    from abduct._stats.resampling import interval
    from abduct_report.paired_tests import paired_test

    cluster_of = {i: i % clusters for i in range(units)}
    rng = np.random.default_rng(0)
    plain, second = (UnitScores.means("question", {i: bool(right[c]) for i, c in cluster_of.items()})
                     for right in rng.integers(0, 2, (2, clusters)))  # a cluster's units agree
    grouped = plain.clustered("video", cluster_of)
    paired_test(grouped, second.clustered("video", cluster_of), 10, 0, "warm-up")  # scipy's import
    interval(plain, 10, 0, "warm-up")
    seconds: dict[str, list[float]] = {"unclustered": [], "clustered": [], "paired_unclustered": [],
                                       "paired_clustered": []}
    found: dict[str, Any] = {}
    for _ in range(repeats):  # alternated, so that a change in the machine's load hits both
        for name, scores in (("unclustered", plain), ("clustered", grouped)):
            started = time.perf_counter()
            found[name] = interval(scores, resamples, 0, "accuracy")
            seconds[name].append(time.perf_counter() - started)
            started = time.perf_counter()
            paired_test(scores, second.clustered("video", cluster_of) if scores.cluster else second, resamples, 0,
                        "accuracy")
            seconds[f"paired_{name}"].append(time.perf_counter() - started)
    median = {name: statistics.median(s) for name, s in seconds.items()}
    return {"units": units, "clusters": clusters, "resamples": resamples, "repeats": repeats,
            "unclustered_s": median["unclustered"], "clustered_s": median["clustered"],
            "ratio": median["clustered"] / median["unclustered"],
            "paired_unclustered_s": median["paired_unclustered"], "paired_clustered_s": median["paired_clustered"],
            "paired_ratio": median["paired_clustered"] / median["paired_unclustered"],
            "width_unclustered": found["unclustered"]["high"] - found["unclustered"]["low"],
            "width_clustered": found["clustered"]["high"] - found["clustered"]["low"]}


def widths(run: Path, resamples: int) -> dict[str, Any]:
    """Each clustered metric's interval with and without its clusters (the run's seed)."""
    from abduct._stats.resampling import interval
    from abduct.host import read_units

    seed = int(json.loads((run / "results.json").read_text())["seed"])
    out: dict[str, Any] = {}
    for metric, scores in read_units(run).items():
        if not scores.cluster:
            continue
        with_clusters = interval(scores, resamples, seed, metric)
        without = interval(replace(scores, cluster="", clusters=()), resamples, seed, metric)
        if with_clusters is None or without is None:
            continue
        out[metric] = {"unit": scores.unit, "units": with_clusters["units"], "clustered_by": scores.cluster,
                       "clusters": with_clusters["clusters"], "low": with_clusters["low"], "high": with_clusters["high"],
                       "low_unclustered": without["low"], "high_unclustered": without["high"],
                       "width": with_clusters["high"] - with_clusters["low"],
                       "width_unclustered": without["high"] - without["low"]}
        out[metric]["width_ratio"] = out[metric]["width"] / out[metric]["width_unclustered"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--clusters", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--run", type=Path, nargs="*", default=[], help="finished runs whose widths to compare")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {"cost": cost(args.units, args.clusters, args.repeats, args.resamples)}
    if args.run:
        report["runs"] = {str(run): widths(run, args.resamples) for run in args.run}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    c = report["cost"]
    print(f"{c['units']} units in {c['clusters']} clusters, {c['resamples']} resamples, median of {c['repeats']}: "
          f"unclustered {c['unclustered_s']:.3f} s, clustered {c['clustered_s']:.3f} s = ratio {c['ratio']:.2f} "
          f"(goal: at most 2); width {c['width_unclustered']:.2f} unclustered, {c['width_clustered']:.2f} clustered")
    print(f"paired test: unclustered {c['paired_unclustered_s']:.3f} s, clustered {c['paired_clustered_s']:.3f} s "
          f"= ratio {c['paired_ratio']:.2f}")
    for run, metrics in report.get("runs", {}).items():
        for metric, w in metrics.items():
            print(f"{run} {metric}: {w['units']} {w['unit']} in {w['clusters']} {w['clustered_by']} clusters: "
                  f"[{w['low']:.4f}, {w['high']:.4f}] width {w['width']:.4f} clustered, "
                  f"[{w['low_unclustered']:.4f}, {w['high_unclustered']:.4f}] width {w['width_unclustered']:.4f} "
                  f"unclustered (x{w['width_ratio']:.2f})")


if __name__ == "__main__":
    main()
