"""VLM generation through abduct against transformers called directly, and a served model's
throughput against its concurrency limit.

Measured in one run, about speed, not accuracy:

1. local: texts/s of ``GenerationEngine.generate`` with the ``vlm`` model (greedy; images read
   from disk, regions drawn, chat template, left-padded batches) against the hand-written
   loop on the same batches (open the images, chat template, processor, ``model.generate``,
   decode) and against that loop one request at a time. The overhead of our path is
   ours / direct batched - 1 (target: at most 10%); on a loaded machine that difference is
   noisy, so the time of what our path adds (reading images, drawing regions, prompts and
   chat template) is also given as a share of the direct batched time. The model is a small random LLaVA built
   offline (``--hidden``, ``--layers`` for its language model; byte-level tokenizer).
2. served: requests/s of ``openai:fake`` against ``FakeOpenAIServer`` with a fixed latency
   per request and a capacity (requests it serves at once), for several concurrency limits:
   throughput grows with the limit until the server's capacity.

Each local figure is the best of ``--repeats`` interleaved rounds after one small warm-up call. On CUDA the model runs in
bfloat16 on both paths.

Usage: python benchmarks/vlm_generation.py [--requests 16] [--batch 8] [--device cpu|cuda] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from PIL import Image
from transformers.utils import logging as hf_logging

from abduct import Box, Decoding, GenerationRequest, Region, Settings, VisualInput
from abduct.host import GenerationEngine, build_registry, load_model
from abduct_testing import make_images
from abduct_vlm._loading import load
from abduct_vlm._model import VisionLanguageModel
from abduct_vlm._tiny import BUILDERS
from abduct_vlm.prompts import Prompts
from abduct_vlm.testing import FakeOpenAIServer


def best_of(repeats: int, paths: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """The best time of each path over ``repeats`` rounds, the paths interleaved within a round
    (so a load change on a shared machine hits all of them alike)."""
    best = {name: float("inf") for name in paths}
    for _ in range(repeats):
        for name, fn in paths.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def local(args: argparse.Namespace, work: Path) -> dict[str, float]:
    directory = work / "llava"
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        BUILDERS["tiny-llava"](directory, hidden=args.hidden, layers=args.layers)
    loaded = load(str(directory), device=args.device, dtype="auto", device_map=None)
    model = VisionLanguageModel(loaded, Prompts(), batch_size=args.batch)
    paths = make_images(work / "images", args.requests, size=(96, 64))
    requests = [GenerationRequest(VisualInput(str(p), Region((Box(8, 8, 30, 20),)), context=f"clue number {i}"),
                                  "What happened here?") for i, p in enumerate(paths)]
    decoding = Decoding(max_new_tokens=args.tokens)
    engine = GenerationEngine(model, decoding=decoding, batch_size=args.batch, quiet=True)
    hf, processor, tokenizer = loaded.model, loaded.processor, loaded.processor.tokenizer
    kwargs = {"max_new_tokens": args.tokens, "do_sample": False, "num_beams": 1, "pad_token_id": tokenizer.pad_token_id}
    dtype = next(hf.parameters()).dtype

    def direct(size: int) -> list[str]:
        out: list[str] = []
        for s in range(0, len(requests), size):
            chunk = requests[s : s + size]
            images = [Image.open(str(r.visual.media)).convert("RGB") for r in chunk]
            texts = [processor.apply_chat_template(
                [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": model.prompts.generation(r.visual, r.prompt)}]}],
                add_generation_prompt=True, tokenize=False) for r in chunk]
            batch = processor(text=texts, images=images, padding=True, return_tensors="pt").to(args.device, dtype=dtype)
            with torch.inference_mode():
                made = hf.generate(**batch, **kwargs)
            out += tokenizer.batch_decode(made[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
        return out

    GenerationEngine(model, decoding=decoding, batch_size=2, quiet=True).generate(requests[:2])  # warm-up
    def prepare() -> None:  # what our path adds before the processor: images, regions drawn, prompts
        for r in requests:
            model.chat(model.prompts.generation(r.visual, r.prompt), len(model.images(r.visual)))

    times = best_of(args.repeats, {"ours": lambda: engine.generate(requests), "batched": lambda: direct(args.batch),
                                   "single": lambda: direct(1), "prepare": prepare})
    ours, batched, single = times["ours"], times["batched"], times["single"]
    n = len(requests)
    return {"ours_texts_per_s": n / ours, "direct_batched_texts_per_s": n / batched,
            "direct_one_at_a_time_texts_per_s": n / single, "overhead_vs_direct_batched": ours / batched - 1.0,
            "speedup_vs_one_at_a_time": single / ours, "our_preparation_vs_direct_batched": times["prepare"] / batched}


def served(args: argparse.Namespace, work: Path) -> list[dict[str, float]]:
    paths = make_images(work / "served", 4, size=(32, 32))
    rows = []
    with FakeOpenAIServer(latency=args.latency, capacity=args.capacity) as fake:
        for limit in args.limits:
            spec = f"openai:fake,base_url={fake.base_url},concurrency={limit},cache=false"
            model = load_model(spec, Settings(), build_registry()).model
            requests = [GenerationRequest(VisualInput(str(paths[i % 4]), context=f"request {i}"), "Describe.")
                        for i in range(args.served_requests)]
            start = time.perf_counter()
            model.generate(requests, Decoding(), None)
            took = time.perf_counter() - start
            rows.append({"concurrency": limit, "requests_per_s": len(requests) / took, "peak_in_flight": fake.peak})
            fake.peak = 0
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--capacity", type=int, default=8)
    parser.add_argument("--limits", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--served-requests", type=int, default=48)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    with tempfile.TemporaryDirectory() as tmp:
        results = {"device": args.device, "local": local(args, Path(tmp)), "served": served(args, Path(tmp))}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"local generation ({args.requests} requests, batch {args.batch}, {args.tokens} new tokens, "
          f"LLaVA hidden {args.hidden} x {args.layers} layers, {args.device})")
    for key, value in results["local"].items():
        print(f"  {key:<36} {value:8.3f}")
    print(f"served ({args.served_requests} requests, fake server latency {args.latency * 1000:.0f} ms, "
          f"capacity {args.capacity})")
    print("  concurrency  requests/s  peak in flight")
    for row in results["served"]:
        print(f"  {row['concurrency']:>11}  {row['requests_per_s']:>10.1f}  {row['peak_in_flight']:>14}")


if __name__ == "__main__":
    main()
