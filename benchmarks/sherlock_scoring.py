"""How long Sherlock retrieval scoring takes, against a straightforward per-pair loop.

Scores one 1000x1000 chunk and a validation-sized run (23 chunks of 982-1004) from score
matrices (average-tie ranks both ways, P@1), checks both give the same numbers, and reports
the speed-up. With ``--files`` it also times ``score_files`` on one chunk in the official
formats (a float32 .npy in sorted-test_id order + its answer key JSON).

    python benchmarks/sherlock_scoring.py [--files] [--seed 0] [--chunks 23] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from abduct_sherlock.metrics import retrieval_scores
from abduct_sherlock.tasks import RetrievalTask

CHUNK_SIZES = (1000, 989, 996, 1004, 982, 989, 996, 991, 988, 992, 992, 1000, 997, 990, 988, 987, 998, 983, 996, 983,
               985, 992, 998)


def loop_scores(sim: np.ndarray) -> dict[str, float]:
    """The definition written pair by pair: rank = 1 + #better + #tied / 2, per row and column."""
    rows = sim.tolist()
    n = len(rows)
    im2txt, txt2im = [], []
    for i in range(n):
        d = rows[i][i]
        better = tied = 0
        for j in range(n):
            v = rows[i][j]
            better += v > d
            tied += v == d
        im2txt.append(better + (tied + 1) / 2)
        better = tied = 0
        for j in range(n):
            v = rows[j][i]
            better += v > d
            tied += v == d
        txt2im.append(better + (tied + 1) / 2)
    return {"im2txt": sum(im2txt) / n, "txt2im": sum(txt2im) / n, "p_at_1": 100 * (sum(r == 1.0 for r in im2txt) / n)}


def matrices(sizes: tuple[int, ...], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    # float32 scores, as the leaderboard files store them (some ties included)
    return [rng.random((n, n)).astype(np.float32).astype(np.float64).round(4) for n in sizes]


def timed(fn, *args):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def bench_files(sim: np.ndarray) -> float:
    n = len(sim)
    ids = [f"i{k:04d}" for k in range(n)]
    key = {f"{a}-{b}": [ids[a], ids[b]] for a in range(n) for b in range(n)}
    order = sorted(key)
    scores = np.array([sim[int(key[t][0][1:]), int(key[t][1][1:])] for t in order], dtype=np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        key_path, npy = Path(tmp) / "key.json", Path(tmp) / "p.npy"
        key_path.write_text(json.dumps(key))
        np.save(npy, scores)
        result, seconds = timed(RetrievalTask().score_files, npy, key_path, None)
    assert result == retrieval_scores(sim.astype(np.float32).astype(np.float64))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--files", action="store_true", help="also time official-format file scoring of one chunk")
    parser.add_argument("--chunks", type=int, default=len(CHUNK_SIZES), help="chunks of the validation-sized run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, object] = {}

    (one,) = matrices((1000,), args.seed)
    fast, t_fast = timed(retrieval_scores, one)
    slow, t_slow = timed(loop_scores, one)
    assert fast == slow, (fast, slow)
    report["one_chunk"] = {"vectorised_seconds": t_fast, "loop_seconds": t_slow, "speedup": t_slow / t_fast}
    if not args.json:
        print(f"one 1000x1000 chunk: vectorised {t_fast * 1e3:.1f} ms, per-pair loop {t_slow:.2f} s, "
          f"speed-up x{t_slow / t_fast:.0f}")

    sizes = CHUNK_SIZES[: args.chunks]
    chunks = matrices(sizes, args.seed + 1)
    start = time.perf_counter()
    fast_all = [retrieval_scores(s) for s in chunks]
    t_fast = time.perf_counter() - start
    start = time.perf_counter()
    slow_all = [loop_scores(s) for s in chunks]
    t_slow = time.perf_counter() - start
    assert fast_all == slow_all
    mean = {k: float(np.mean([c[k] for c in fast_all])) for k in ("im2txt", "txt2im", "p_at_1")}
    report["run"] = {"chunks": len(sizes), "instances": sum(sizes), "vectorised_seconds": t_fast,
                     "loop_seconds": t_slow, "speedup": t_slow / t_fast}
    if args.files:
        report["score_files_seconds"] = bench_files(one)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{len(sizes)}-chunk validation-sized run ({sum(sizes)} instances): vectorised {t_fast:.3f} s, "
          f"per-pair loop {t_slow:.1f} s, speed-up x{t_slow / t_fast:.0f}; random means {mean}")
    if args.files:
        print(f"score_files on one chunk (.npy of 1M float32 + 1M-entry answer key JSON): {report['score_files_seconds']:.2f} s")


if __name__ == "__main__":
    main()
