"""``lmms:`` overhead: abduct's path against the same lmms-eval model class called directly.

    python benchmarks/lmms_adapter.py [--samples 12] [--max-new-tokens 8] [--repeat 3]

One ``LlavaHf`` (lmms-eval's ``llava_hf``, chat class, as ``lmms-eval --model llava_hf`` picks)
on the tiny local LLaVA, CPU. The requests are those ``nleye-triplet`` asks on a synthetic
corpus (two per triplet, three images each).

* direct: the ``Instance``s built once beforehand, as lmms-eval's evaluator builds them, then
  ``generate_until`` timed alone;
* abduct: ``GenerationEngine.generate`` on the same requests through ``lmms:`` (input checks,
  documents, instances, the call, answers back), no cache.

Both runs alternate ``--repeat`` times; the ratio of the fastest runs is the overhead (target:
at most 1.10): on a shared machine the fastest run is the one least slowed by other work (the
medians are printed too). Needs abduct-lmms and abduct-nleye installed; no download.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from lmms_eval.models import get_model

from abduct import Decoding, Generate, GenerationRequest, RunInfo, Settings
from abduct.host import GenerationEngine, get_registry, load_examples
from abduct_lmms._model import LmmsModel
from abduct_lmms.docs import generation_doc
from abduct_nleye.synth import synthesize
from abduct_vlm._tiny import tiny_directory


def planned_requests(task: str, data_dir: Path) -> list[GenerationRequest]:
    """The generation requests of the task's plan, in order, as a run would ask a generator."""
    settings = Settings(seed=0)
    prepared, collected = load_examples(task, data_dir, None, None, registry=get_registry(), settings=settings)
    known = RunInfo(split=prepared.split, model_name="lmms-eval", scores=False, generates=True, judged=False,
                    metric=lambda metric, **options: None, settings=settings, corpus=collected.corpus)
    return [item.request for stage in prepared.task.plan(collected.examples, known)
            if isinstance(stage.request, Generate) for item in stage.request.items]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=12)
    parser.add_argument("--max-new-tokens", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="lmms-bench-"))
    synthesize(root / "nleye", args.samples, 0)
    pretrained = tiny_directory("tiny", root / "models")

    seen = planned_requests("nleye-triplet", root / "nleye")

    cls = get_model("llava_hf")
    lm = cls.create_from_arg_string(f"pretrained={pretrained},device=cpu,device_map=cpu")
    decoding = Decoding(max_new_tokens=args.max_new_tokens)
    ours = LmmsModel(lm, "lmms:llava_hf", "bench")
    engine = GenerationEngine(ours, decoding=decoding, batch_size=64, quiet=True)
    gen_kwargs = {"max_new_tokens": decoding.max_new_tokens, "num_beams": 1, "do_sample": False, "temperature": 0}

    def direct() -> list[str]:
        docs = [generation_doc(r) for r in seen]  # what the evaluator holds before it calls the model
        instances = ours._instances("generate_until", docs, gen_kwargs)
        start = time.perf_counter()
        made = lm.generate_until(instances)
        timings["direct"].append(time.perf_counter() - start)
        return [getattr(m, "text", m) for m in made]

    def through_abduct() -> list[str]:
        start = time.perf_counter()
        made = engine.generate(seen)
        timings["abduct"].append(time.perf_counter() - start)
        return made

    timings: dict[str, list[float]] = {"direct": [], "abduct": []}
    direct()  # warm-up (first-call allocations), not counted
    timings["direct"].clear()
    for _ in range(args.repeat):
        a, b = direct(), through_abduct()
        assert a == b, "the two paths disagree"
    d, o = min(timings["direct"]), min(timings["abduct"])
    dm, om = statistics.median(timings["direct"]), statistics.median(timings["abduct"])
    if args.json:
        print(json.dumps({"requests": len(seen), "direct_seconds": dm, "abduct_seconds": om,
                          "overhead": om / dm - 1, "overhead_fastest": o / d - 1}))
        return
    print(f"{len(seen)} requests, max_new_tokens={args.max_new_tokens}, tiny LLaVA on CPU, {args.repeat} runs each")
    print(f"direct lmms-eval generate_until: {d:.3f} s fastest, {dm:.3f} s median")
    print(f"abduct lmms: (GenerationEngine): {o:.3f} s fastest, {om:.3f} s median")
    print(f"ratio abduct/direct: {o / d:.3f} fastest, {om / dm:.3f} median (target <= 1.10)")


if __name__ == "__main__":
    main()
