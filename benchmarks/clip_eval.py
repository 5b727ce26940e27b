"""How close does ``abduct eval sherlock-retrieval`` with a CLIP model come to the model's
own encoding time, and how much does the dual-encoder path save over per-pair scoring?

Measured in one run, on the synthetic Sherlock corpus:

1. overhead: end-to-end evaluation of one ~1000 x 1000 retrieval chunk (model loading,
   data loading, caching off, ranking, writing outputs) divided by the time the model
   itself needs to encode that chunk's unique images and texts, minus one;
2. speed-up: the same evaluation on a ~100 x 100 chunk with a naive scorer that encodes the
   image and the text of every pair, divided by the dual-encoder evaluation.

Usage: python benchmarks/clip_eval.py [--models clip:tiny clip:ViT-B-16] [--chunk 1000] [--json]
(ViT-B-16 has random weights here; the numbers are about speed, not accuracy.)
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from abduct import Registration, Settings, Spec, VisualInput, hookimpl
from abduct.host import EvalConfig, build_registry, get_registry, load_model, run_evaluation


def _first_chunk(data: Path) -> tuple[list[VisualInput], list[str]]:
    """The first validation chunk as CLIP sees it: image and region (the clue is not read)."""
    from abduct_sherlock import load_instances

    instances = load_instances(data, "val")
    first = min(i.split_idx for i in instances if i.split_idx is not None)
    members = [i for i in instances if i.split_idx == first]
    return [m.visual.without(frozenset({"context"})) for m in members], [m.inference for m in members]


def _evaluate(spec: str, data: Path, out: Path, batch_size: int, device: str,
              registry: Any = None) -> tuple[float, dict[str, Any]]:
    config = EvalConfig(task="sherlock-retrieval", model=spec, data_dir=data, out_dir=out, limit=1,
                        batch_size=batch_size, device=device, quiet=True, use_cache=False)
    started = time.perf_counter()
    results = run_evaluation(config, registry)
    return time.perf_counter() - started, results


def _encoding_seconds(spec: str, visuals: Sequence[VisualInput], texts: Sequence[str], batch_size: int,
                      device: str) -> float:
    """The model's own time for each unique input once, in the same batch size."""
    model = load_model(spec, Settings(batch_size=batch_size, device=device), get_registry()).model
    unique_visuals, unique_texts = list(dict.fromkeys(visuals)), list(dict.fromkeys(texts))
    started = time.perf_counter()
    for i in range(0, len(unique_visuals), batch_size):
        model.encode_visual(unique_visuals[i : i + batch_size])
    for i in range(0, len(unique_texts), batch_size):
        model.encode_text(unique_texts[i : i + batch_size])
    return time.perf_counter() - started


class NaivePairScorer:
    """What a per-pair model costs: every pair encodes its image and its text again."""

    accepts = frozenset({"image", "region"})

    def __init__(self, spec: Spec, settings: Settings) -> None:
        from abduct_clip.factory import make_clip

        self.inner = make_clip(Spec("clip", spec.argument, spec.tag), settings)
        self.fingerprint = "naive|" + self.inner.fingerprint

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return self.inner.score(visuals, texts)


class _NaivePlugin:
    @hookimpl
    def register_models(self) -> list[Registration]:
        return [Registration("naive-clip", "CLIP scored pair by pair (benchmark only)", "clip_eval:NaivePairScorer")]


def _naive_registry() -> Any:
    return build_registry([("clip-eval-benchmark", _NaivePlugin())])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["clip:tiny", "clip:ViT-B-16"])
    parser.add_argument("--chunk", type=int, default=1000, help="instances in the large chunk")
    parser.add_argument("--small-chunk", type=int, default=100, help="instances in the pairwise chunk")
    parser.add_argument("--pairwise-model", default="clip:tiny",
                        help="model of the per-pair comparison ('none' skips it; every pair re-encodes its image)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto, for both the model's own pass and the run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from abduct_sherlock.synth import synthesize

    report: dict[str, Any] = {"cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                              "cuda": torch.cuda.is_available(), "device": args.device, "models": {}}
    with tempfile.TemporaryDirectory(prefix="clip-bench-") as tmp:
        root = Path(tmp)
        # ~3.8 instances per image and a quarter of the images in validation
        big = synthesize(root / "big", images=round(args.chunk / 3.8 / 0.25) + 4, seed=0, chunk_instances=args.chunk)
        small = synthesize(root / "small", images=round(args.small_chunk / 3.8 / 0.25) + 4, seed=0,
                           chunk_instances=args.small_chunk)
        visuals, texts = _first_chunk(big)
        for spec in args.models:
            encode = _encoding_seconds(spec, visuals, texts, args.batch_size, args.device)
            total, results = _evaluate(spec, big, root / "out" / spec.replace(":", "_"), args.batch_size, args.device)
            report["models"][spec] = {
                "chunk_instances": len(visuals),
                "unique_images": len(set(v.media for v in visuals)),
                "encode_seconds": encode,
                "eval_seconds": total,
                "eval_model_seconds": results["timings"]["model_seconds"],
                "overhead": total / encode - 1.0,
            }
        if args.pairwise_model != "none":
            spec = args.pairwise_model
            small_visuals, _ = _first_chunk(small)
            fast, fast_results = _evaluate(spec, small, root / "fast", args.batch_size, args.device)
            naive_spec = "naive-clip" + spec.removeprefix("clip")
            slow, slow_results = _evaluate(naive_spec, small, root / "slow", args.batch_size, args.device,
                                           _naive_registry())
            report["pairwise"] = {"model": spec, "chunk_instances": len(small_visuals), "dual_encoder_seconds": fast,
                                  "per_pair_seconds": slow, "speedup": slow / fast,
                                  "same_metrics": fast_results["metrics"] == slow_results["metrics"]}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for spec, row in report["models"].items():
        print(f"{spec}: {row['chunk_instances']}x{row['chunk_instances']} chunk, eval {row['eval_seconds']:.1f}s vs "
              f"encoding {row['encode_seconds']:.1f}s -> overhead {100 * row['overhead']:.1f}%")
    if "pairwise" not in report:
        return
    p = report["pairwise"]
    print(f"{p['model']} {p['chunk_instances']}x{p['chunk_instances']}: per-pair {p['per_pair_seconds']:.1f}s vs "
          f"dual encoder {p['dual_encoder_seconds']:.1f}s -> speed-up {p['speedup']:.1f}x (same metrics: {p['same_metrics']})")


if __name__ == "__main__":
    main()
