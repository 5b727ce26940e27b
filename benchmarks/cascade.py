"""What does cascade re-ranking save, and what does it cost in accuracy?

Measured in one run on one synthetic Sherlock retrieval chunk (``--chunk`` instances, the
release's size is ~1000), with tiny models trained here on the same corpus:

1. cross-encoder forward passes and seconds: the full pairwise matrix (``chunk**2`` passes)
   against ``cascade:clip+lxmert,k=K`` (at most ``K * 2 * chunk``); the ratios;
2. P@1 and mean ranks of the three (dual alone, cross alone, cascade), and the cascade's
   difference from the full cross-encoder;
3. region-feature extraction, images per second, uncached and from the on-disk cache.

Usage: python benchmarks/cascade.py [--chunk 1000] [--k 50] [--steps 300] [--dual-steps 300] [--json]
(a 1000 x 1000 chunk is a million cross-encoder passes: minutes on a GPU, long on a CPU.)
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from abduct import Settings
from abduct._builtins.cascade import CascadeScorer
from abduct._engine.inputs import InputPolicy
from abduct.contract.records import FEATURES  # what the runner offers a model as optional
from abduct.host import ScoringEngine, get_registry, load_model


def chunk_inputs(data: Path) -> tuple[list[Any], list[str]]:
    """The largest validation chunk: each instance's (image, region, clue) and inference."""
    from abduct_sherlock import load_instances

    chunks: dict[int, list[Any]] = {}
    for inst in load_instances(data, "val"):
        chunks.setdefault(int(inst.split_idx), []).append(inst)
    members = max(chunks.values(), key=len)
    return [m.visual for m in members], [m.inference for m in members]


def retrieval(scores: np.ndarray) -> dict[str, float]:
    from abduct_sherlock.metrics import retrieval_scores

    return retrieval_scores(scores)


def timed(fn: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk", type=int, default=1000)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--steps", type=int, default=300, help="lxmert:tiny training steps")
    parser.add_argument("--dual-steps", type=int, default=300, help="clip:tiny training steps")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--work", type=Path, default=None,
                        help="keep the corpus and models here; what it already holds is reused")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from abduct_clip._train import TrainConfig as ClipConfig
    from abduct_clip._train import train_from_data_dir
    from abduct_lxmert._model import FAMILY
    from abduct_regions.featurizer import RegionFeaturizer
    from abduct_regions.training import LAST, TrainConfig, train
    from abduct_sherlock.synth import synthesize

    work = args.work or Path(tempfile.mkdtemp(prefix="abduct-cascade-bench-"))
    os.environ["ABDUCT_CACHE_DIR"] = str(work / "cache")
    images = max(8, round(args.chunk / 3.8 / 0.25) + 2)  # the validation quarter holds one chunk
    data = work / "data"
    if not (data / "SYNTHETIC").is_file():
        synthesize(data, images=images, seed=0, chunk_instances=args.chunk)
    visuals, texts = chunk_inputs(data)
    n = len(visuals)

    if not (work / "clip" / "best.pt").is_file():
            train_from_data_dir(ClipConfig(data_dir=data, out_dir=work / "clip", model="clip:tiny", steps=args.dual_steps,
                                       batch_size=32, lr=5e-4, warmup=40, checkpoint_every=args.dual_steps,
                                       val_limit=64, device=args.device, quiet=True, workers=0))
    if not (work / "lxmert" / LAST).is_dir():
        train(FAMILY, TrainConfig(data_dir=data, out_dir=work / "lxmert", model="lxmert:tiny", steps=args.steps,
                                  batch_size=16, lr=2e-3, warmup=20, checkpoint_every=args.steps, val_limit=32,
                                  device=args.device, quiet=True))

    settings = Settings(device=args.device, batch_size=256)
    registry = get_registry()
    dual = load_model(f"clip:{work / 'clip' / 'best.pt'},workers=0", settings, registry).model
    cross = load_model(f"lxmert:{work / 'lxmert' / LAST}", settings, registry).model
    cross.featurizer.tokens(visuals)  # features made once, outside both timings

    # the dual encoder sees what it accepts of the inputs (not the clue), as inside the cascade
    dual_engine = ScoringEngine(dual, batch_size=256, quiet=True, policy=InputPolicy(dual, "clip", optional=FEATURES))
    dual_scores = dual_engine.score_matrix(visuals, texts)
    before = cross.passes
    full, full_seconds = timed(lambda: ScoringEngine(cross, batch_size=256, quiet=True).score_matrix(visuals, texts))
    full_passes = cross.passes - before
    cascade = CascadeScorer(dual, cross, args.k, batch_size=256)
    before = cross.passes
    merged, cascade_seconds = timed(lambda: cascade.score_matrix(visuals, texts))
    cascade_passes = cross.passes - before

    # feature extraction: a fresh cache, then a second featurizer reading it
    unique_images = list(dict.fromkeys(v.media for v in visuals))[:100]
    probe = [type(visuals[0])(m) for m in unique_images]
    cold = RegionFeaturizer(cross.inputs.features, cache_dir=work / "feature-cache")
    _, cold_seconds = timed(lambda: [cold.one(v) for v in probe])
    warm = RegionFeaturizer(cross.inputs.features, cache_dir=work / "feature-cache")
    _, warm_seconds = timed(lambda: [warm.one(v) for v in probe])

    rows = {"dual (clip:tiny)": retrieval(dual_scores), "cross (lxmert:tiny)": retrieval(full),
            f"cascade k={args.k}": retrieval(merged)}
    result = {
        "chunk": n, "k": args.k, "steps": args.steps, "dual_steps": args.dual_steps,
        "full_passes": full_passes, "cascade_passes": cascade_passes,
        "pass_ratio": full_passes / max(cascade_passes, 1),
        "full_seconds": full_seconds, "cascade_seconds": cascade_seconds,
        "time_ratio": full_seconds / max(cascade_seconds, 1e-9),
        "retrieval": rows,
        "p_at_1_difference": rows[f"cascade k={args.k}"]["p_at_1"] - rows["cross (lxmert:tiny)"]["p_at_1"],
        "features_images_per_s": {"uncached": len(probe) / cold_seconds, "cached": len(probe) / warm_seconds},
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"chunk {n} x {n}, k = {args.k}, lxmert:tiny trained {args.steps} steps, clip:tiny {args.dual_steps}")
    print(f"{'':22}{'passes':>10}{'seconds':>10}")
    print(f"{'full pairwise':22}{full_passes:>10}{full_seconds:>10.1f}")
    print(f"{'cascade':22}{cascade_passes:>10}{cascade_seconds:>10.1f}")
    print(f"{'ratio (full/cascade)':22}{result['pass_ratio']:>10.1f}{result['time_ratio']:>10.1f}")
    print(f"\n{'':22}{'P@1':>8}{'im2txt':>8}{'txt2im':>8}")
    for label, values in rows.items():
        print(f"{label:22}{values['p_at_1']:>8.2f}{values['im2txt']:>8.2f}{values['txt2im']:>8.2f}")
    print(f"cascade - cross P@1: {result['p_at_1_difference']:+.2f} points")
    rates = result["features_images_per_s"]
    print(f"\nregion features ({cross.inputs.features.backbone}, {len(probe)} images): "
          f"{rates['uncached']:.1f} images/s uncached, {rates['cached']:.1f} images/s cached "
          f"({rates['cached'] / rates['uncached']:.1f}x)")


if __name__ == "__main__":
    main()
