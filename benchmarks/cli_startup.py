"""How long does `abduct --help` take with every installed plugin, against a bare Python start?

Listing commands builds the plugin registry, which imports every plugin's entry module; those
must stay light (no torch), so the CLI answers at once. Prints the median of several runs of
each and their ratio.

Usage: python benchmarks/cli_startup.py [--runs 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time


def median_seconds(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bare = median_seconds([sys.executable, "-c", "pass"], args.runs)
    help_ = median_seconds([sys.executable, "-m", "abduct", "--help"], args.runs)
    plugins = json.loads(subprocess.run([sys.executable, "-m", "abduct", "plugins", "--json"],
                                        check=True, capture_output=True, text=True).stdout)
    report = {"python_seconds": bare, "abduct_help_seconds": help_, "ratio": help_ / bare,
              "plugins": [p["name"] for p in plugins]}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"abduct --help: {help_:.3f}s median of {args.runs} ({len(plugins)} plugins: {', '.join(report['plugins'])}); "
          f"bare python: {bare:.3f}s; ratio {report['ratio']:.1f}x")


if __name__ == "__main__":
    main()
