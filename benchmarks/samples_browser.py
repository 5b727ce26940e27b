"""samples.html on a large run: the time spent writing the sample browser (views, thumbnails,
page) against the run's wall time, and its size on disk.

    python benchmarks/samples_browser.py [--samples 20000] [--side 48] [--runs 2]

A synthetic NL-EYE corpus (three images per triplet) is evaluated with the ``random`` model
(needs abduct-nleye): the cheapest possible run, so the ratio is an upper bound of what a real
model's run would see. ``--side`` rewrites every image at that side first (the synthetic
corpus draws 48 px images, small enough to be linked as they are; at 160 px and above the
noise PNGs need thumbnails). ``--runs`` evaluates the corpus again into another folder with the
same cache directory: the later runs link the thumbnails the first one made.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

import abduct._run.evaluate as evaluate
from abduct._run.evaluate import EvalConfig, run_evaluation
from abduct_nleye.synth import synthesize


def _megabytes(files: list[Path]) -> float:
    return sum(p.stat().st_size for p in files) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--side", type=int, default=48)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = synthesize(Path(tmp) / "data", samples=args.samples, seed=0)
        if args.side != 48:
            rng = np.random.default_rng(0)
            for path in (data / "images").rglob("*.png"):
                Image.fromarray(rng.integers(0, 256, (args.side * 3 // 4, args.side, 3), dtype=np.uint8)).save(path)
        spent: list[float] = []
        render = evaluate.render_samples

        def timed(*a, **k):  # the browser's share of write_outputs: its views, thumbnails and page
            start = time.perf_counter()
            try:
                return render(*a, **k)
            finally:
                spent.append(time.perf_counter() - start)

        evaluate.render_samples = timed
        print(f"samples {args.samples}, images {3 * args.samples} ({args.side} px side)")
        for run in range(args.runs):
            out = Path(tmp) / f"run{run}"
            start = time.perf_counter()
            run_evaluation(EvalConfig(task="nleye-triplet", model="random", data_dir=data, out_dir=out, quiet=True,
                                      cache_dir=Path(tmp) / "cache"))
            wall = time.perf_counter() - start
            page_mb = (out / "samples.html").stat().st_size / 1e6
            files = list((out / "samples").iterdir())
            made = [f for f in files if f.suffix == ".jpg"]
            linked = [f for f in files if f.suffix != ".jpg"]  # hard links: no new disk on one file system
            print(f"run {run + 1}: wall time {wall:.1f} s; samples browser {spent[run]:.1f} s = "
                  f"{100 * spent[run] / wall:.1f}% of it")
            print(f"  samples.html {page_mb:.1f} MB; samples/ {len(made)} thumbnails ({_megabytes(made):.1f} MB), "
                  f"{len(linked)} originals linked as they are ({_megabytes(linked):.1f} MB)")


if __name__ == "__main__":
    main()
