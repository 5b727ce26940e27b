"""T5 scoring and generation through abduct against transformers called directly.

Measured in one run, on a small-but-not-trivial random T5 (d_model 256, 4+4 layers, d_ff 1024,
the t5:tiny tokenizer) and Sherlock-like (clue, inference) pairs — about speed, not accuracy:

1. scoring: pairs/s of ``ScoringEngine.score_pairs`` with the ``t5`` model (batched, padded,
   each distinct clue encoded once) against scoring the same pairs one at a time with
   transformers (``model(input_ids, labels).loss`` per pair), the usual hand-written loop;
2. generation: texts/s of ``GenerationEngine.generate`` (greedy) against ``model.generate``
   called directly on the same batches (tokenise, generate, decode); the overhead of our path
   is ours / direct - 1 (target: at most 10%).

Each figure is the best of ``--repeats`` runs after a warm-up. On CUDA both paths run under
bfloat16 autocast.

Usage: python benchmarks/t5_scoring.py [--pairs 512] [--requests 256] [--device cpu|cuda] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

import torch
from transformers import T5ForConditionalGeneration

from abduct import Decoding, GenerationRequest, VisualInput
from abduct.host import GenerationEngine, ScoringEngine
from abduct_t5._loading import Loaded, tiny_config, tiny_tokenizer
from abduct_t5._model import T5Model, autocast

COLORS = ("red", "blue", "green", "yellow", "white", "black", "orange", "purple")
THINGS = ("umbrella", "ball", "cup", "hat", "bag", "book", "bottle", "phone", "bike", "boat")
PLACES = ("beach", "snow", "forest", "kitchen", "office", "pool", "farm", "street")
WHO = ("someone", "a child", "a worker", "a family", "a skier", "the owner")
DOING = ("left", "forgot", "is using", "will come back for", "was playing with", "dropped")


def clue(rng: random.Random) -> str:
    n = rng.choice(("a", "two"))
    return f"{n} {rng.choice(COLORS)} {rng.choice(THINGS)}{'s' if n == 'two' else ''} near the {rng.choice(PLACES)}"


def inference(rng: random.Random) -> str:
    return (f"{rng.choice(WHO)} {rng.choice(DOING)} the {rng.choice(COLORS)} {rng.choice(THINGS)} "
            f"at the {rng.choice(PLACES)} {rng.choice(('recently', 'this morning', 'probably', 'a while ago'))}")


def best_of(repeats: int, fn: Callable[[], Any]) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=512, help="(clue, inference) pairs to score")
    parser.add_argument("--per-clue", type=int, default=8, help="inferences per clue (a comparison source has ~10)")
    parser.add_argument("--requests", type=int, default=256, help="texts to generate")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--gen-batch-size", type=int, default=32)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    device = torch.device(args.device)
    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = tiny_config(len(tokenizer), d_model=256, d_kv=32, d_ff=1024, num_layers=4, num_decoder_layers=4,
                         num_heads=8, relative_attention_num_buckets=32, relative_attention_max_distance=128)
    hf = T5ForConditionalGeneration(config).eval()
    params = sum(p.numel() for p in hf.parameters())
    model = T5Model(Loaded(hf, tokenizer, None, "bench"), device=str(device), batch_size=args.batch_size)
    hf = model.model  # the same module, on the device

    rng = random.Random(0)
    clues = [clue(rng) for _ in range(args.pairs // args.per_clue)]
    visuals = [VisualInput(context=c) for c in clues for _ in range(args.per_clue)]
    texts = [inference(rng) for _ in visuals]

    # -- scoring -------------------------------------------------------------------------------
    def ours_score() -> Any:
        return ScoringEngine(model, batch_size=args.batch_size, quiet=True).score_pairs(visuals, texts)

    def direct_score() -> list[float]:
        out = []
        with torch.inference_mode(), autocast(device):
            for v, t in zip(visuals, texts):
                source = tokenizer(f"clue: {v.context}", return_tensors="pt").to(device)
                labels = tokenizer(t, return_tensors="pt")["input_ids"].to(device)
                out.append(-float(hf(**source, labels=labels).loss))
        return out

    ours_scores, direct_scores = ours_score(), direct_score()
    max_diff = max(abs(a - b) for a, b in zip(ours_scores, direct_scores))
    t_ours = best_of(args.repeats, ours_score)
    t_direct = best_of(args.repeats, direct_score)

    # -- generation ----------------------------------------------------------------------------
    gen_rng = random.Random(1)
    requests = [GenerationRequest(VisualInput(context=clue(gen_rng) + f" #{i}")) for i in range(args.requests)]
    decoding = Decoding(max_new_tokens=args.max_new_tokens)
    sources = [f"clue: {r.visual.context}" for r in requests]
    batches = [sources[i : i + args.gen_batch_size] for i in range(0, len(sources), args.gen_batch_size)]

    def ours_generate() -> list[str]:
        return GenerationEngine(model, decoding=decoding, batch_size=args.gen_batch_size, quiet=True).generate(requests)

    def direct_generate() -> list[str]:
        out: list[str] = []
        for batch in batches:
            encoded = tokenizer(batch, padding=True, return_tensors="pt").to(device)
            with torch.inference_mode(), autocast(device):
                made = hf.generate(**encoded, max_new_tokens=args.max_new_tokens, num_beams=1, do_sample=False)
            out.extend(t.strip() for t in tokenizer.batch_decode(made, skip_special_tokens=True))
        return out

    same_texts = ours_generate() == direct_generate()
    g_ours = best_of(args.repeats, ours_generate)
    g_direct = best_of(args.repeats, direct_generate)

    result = {
        "device": str(device), "threads": torch.get_num_threads(), "parameters": params,
        "scoring": {"pairs": len(texts), "ours_pairs_per_s": len(texts) / t_ours,
                    "one_at_a_time_pairs_per_s": len(texts) / t_direct, "speedup": t_direct / t_ours,
                    "max_abs_difference": max_diff},
        "generation": {"requests": len(requests), "batch_size": args.gen_batch_size,
                       "max_new_tokens": args.max_new_tokens, "ours_texts_per_s": len(requests) / g_ours,
                       "direct_texts_per_s": len(requests) / g_direct, "overhead": g_ours / g_direct - 1,
                       "same_texts": same_texts},
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    s, g = result["scoring"], result["generation"]
    print(f"random T5, {params / 1e6:.1f}M parameters, {device}, {result['threads']} threads")
    print(f"scoring {s['pairs']} pairs: ours {s['ours_pairs_per_s']:.0f} pairs/s, one at a time with transformers "
          f"{s['one_at_a_time_pairs_per_s']:.0f} pairs/s (x{s['speedup']:.1f}; max |diff| {s['max_abs_difference']:.1e})")
    print(f"generating {g['requests']} texts (greedy, {g['max_new_tokens']} new tokens, batches of {g['batch_size']}): "
          f"ours {g['ours_texts_per_s']:.1f} texts/s, model.generate directly {g['direct_texts_per_s']:.1f} texts/s "
          f"(overhead {100 * g['overhead']:+.1f}%; same texts: {g['same_texts']})")


if __name__ == "__main__":
    main()
