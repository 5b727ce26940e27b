"""What do confidence intervals add to an evaluation's wall time?

1. ``abduct eval sherlock-retrieval`` on a synthetic corpus (``--images``, 1,000 by default):
   each repeat runs the evaluation twice in fresh processes, ``--ci-resamples 1000`` and
   ``--ci-resamples 0`` (caches off, so both do the model's work), and the ratio of their wall
   times is printed, with the seconds results.json records for the intervals alone (scipy's
   import included, as a user pays it);
2. a 10,000-unit per-unit mean: the interval and ``abduct compare``'s paired test (bootstrap
   interval and sign-flip permutation), in seconds;
3. VAR val with its caption metrics: the eval kit's scoring (BLEU-1..4, METEOR, ROUGE-L,
   CIDEr-D; ``all``, ``observed`` and ``hypothesis`` sets) of a VAR-val-sized submission
   (``--examples`` chains of 4 or 5 events, synthetic sentences, or ``--var-annotations FILE``'s
   real sentences, each event "predicted" by the next one of its chain), with and without the
   intervals of every metric (units by video example, 1,000 resamples): seconds and ratio.

Usage: python benchmarks/intervals.py [--model random] [--images 1000] [--repeats 3] [--json]
(needs abduct-sherlock, and abduct-var with abduct-metrics and Java; any scoring model runs,
e.g. --model clip:tiny with abduct-clip).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def timed_eval(data: Path, out: Path, model: str, resamples: int) -> tuple[float, float]:
    """(wall seconds of the whole process, seconds results.json gives the intervals)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "abduct", "eval", "sherlock-retrieval", "--model", model, "--data",
                    str(data), "--out", str(out), "--no-cache", "--quiet", "--overwrite",
                    "--ci-resamples", str(resamples)], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    results = json.loads((out / "results.json").read_text())
    return wall, float(results["timings"]["interval_seconds"])


def units_timing(n: int) -> dict[str, float]:
    import numpy as np

    from abduct import UnitScores
    from abduct._stats.resampling import interval
    from abduct_report.paired_tests import paired_test

    rng = np.random.default_rng(0)
    first = UnitScores.means("unit", {i: bool(v) for i, v in enumerate(rng.integers(0, 2, n))})
    other = UnitScores.means("unit", {i: bool(v) for i, v in enumerate(rng.integers(0, 2, n))})
    interval(first, 10, 0, "warm-up")  # scipy's import outside the timings
    started = time.perf_counter()
    interval(first, 1000, 0, "accuracy")
    middle = time.perf_counter()
    paired_test(first, other, 1000, 0, "accuracy")
    return {"units": n, "interval_seconds": middle - started, "paired_test_seconds": time.perf_counter() - middle}


def var_entries(examples: int, annotations: Path | None) -> list[Any]:
    """A VAR-val-sized submission: chains of 4 or 5 events, the last one the hypothesis."""
    from abduct_var.submission import Entry

    if annotations is not None:
        chains = [[e["sentence"] for e in x["events"]] for x in json.loads(annotations.read_text()).values()]
    else:
        from abduct_metrics.testing import generated_data

        predictions, references = generated_data(examples * 5, seed=0, max_refs=1, related=True)
        sentences = [references[k][0] for k in predictions]
        chains = [sentences[i:i + 4 + i // 5 % 2] for i in range(0, len(sentences), 5)]
    return [Entry(f"x{n}", i, chain[(i + 1) % len(chain)], chain[i], i == len(chain) - 1)
            for n, chain in enumerate(chains) for i in range(len(chain))]


def var_timing(examples: int, annotations: Path | None, repeats: int) -> dict[str, Any]:
    from abduct._stats.resampling import interval
    from abduct_var.scoring import score_sets

    entries = var_entries(examples, annotations)
    scoring, intervals = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        sets = score_sets(entries, separate=True)
        middle = time.perf_counter()
        units = sets["all"].units(entries)
        for name in ("observed", "hypothesis"):
            units.update(sets[name].units(entries, f"{name}_"))
        found = [interval(scores, 1000, 0, metric) for metric, scores in units.items()]
        intervals.append(time.perf_counter() - middle)
        scoring.append(middle - started)
    assert all(found)
    score, extra = statistics.median(scoring), statistics.median(intervals)
    return {"events": len(entries), "examples": len({e.example_id for e in entries}), "metrics": len(units),
            "sentences": "real" if annotations is not None else "synthetic", "scoring_s": score,
            "intervals_s": extra, "ratio": (score + extra) / score}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="random")
    parser.add_argument("--images", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--examples", type=int, default=460, help="VAR chains (val has 460)")
    parser.add_argument("--var-annotations", type=Path, help="a VAR annotation file whose sentences to score")
    parser.add_argument("--only", choices=("retrieval", "units", "var"), help="run one part")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.only in ("units", "var"):
        part = units_timing(args.units) if args.only == "units" else var_timing(args.examples, args.var_annotations,
                                                                                  args.repeats)
        print(json.dumps({args.only: part}, indent=2))
        return

    from abduct_sherlock.synth import synthesize

    work = Path(tempfile.mkdtemp(prefix="abduct-intervals-bench-"))
    data = synthesize(work / "data", images=args.images, seed=0)
    with_ci, without, ci_seconds = [], [], []
    for _ in range(args.repeats):  # alternated, so that a change in the machine's load hits both
        wall, seconds = timed_eval(data, work / "with", args.model, 1000)
        with_ci.append(wall)
        ci_seconds.append(seconds)
        without.append(timed_eval(data, work / "without", args.model, 0)[0])
    instances = json.loads((work / "with" / "results.json").read_text())["metrics"]["instances"]
    report: dict[str, Any] = {
        "retrieval": {"model": args.model, "images": args.images, "instances": instances,
                      "wall_with_intervals_s": statistics.median(with_ci), "wall_without_s": statistics.median(without),
                      "interval_seconds": statistics.median(ci_seconds),
                      "ratio": statistics.median(with_ci) / statistics.median(without)},
        "units": units_timing(args.units),
        "var": var_timing(args.examples, args.var_annotations, args.repeats),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    r, u, v = report["retrieval"], report["units"], report["var"]
    print(f"sherlock-retrieval, {r['model']}, {r['images']} images ({r['instances']} val instances), "
          f"median of {args.repeats}: {r['wall_with_intervals_s']:.2f} s with intervals / "
          f"{r['wall_without_s']:.2f} s without = ratio {r['ratio']:.3f} "
          f"(intervals alone {r['interval_seconds']:.2f} s)")
    print(f"{u['units']} units: interval {u['interval_seconds']:.2f} s, paired test {u['paired_test_seconds']:.2f} s")
    print(f"VAR val scoring, {v['events']} events in {v['examples']} examples ({v['sentences']} sentences), "
          f"median of {args.repeats}: {v['scoring_s']:.2f} s without intervals, + {v['intervals_s']:.2f} s for "
          f"{v['metrics']} intervals = ratio {v['ratio']:.3f}")


if __name__ == "__main__":
    main()
