"""BlackSwan's clips through the frame sampler: every clip a question shows decoded once for all
the questions that share it, against decoding each question's clips for that question alone; and
what `abduct eval` adds around the colour probe's own pass. All ratios come from one run.

    python benchmarks/blackswan_frames.py [--videos 24] [--frames 8] [--workers 1] [--repeat 3] [--json]

* corpus: ``abduct blackswan synth`` with ``--videos`` videos per split (three 1 s clips of
  48x48 each); the questions are the validation split's MCQ and Y/N questions, each shown as
  its task shows it (a Detective the pre- and post-event clips, a Reporter the three clips or
  the whole video: ``abduct_blackswan.inputs``). Several questions share a video (as in the
  release: 3,825 MCQs and 6,680 Y/N questions over 1,655 videos);
* ``per question``: ``FrameSampler.frames(visual)`` once per question, so a clip is decoded again
  for every question that shows it;
* ``shared``: ``FrameSampler.frames_many`` over all the questions at once: each clip decoded
  once (what the colour probe does per call, and remembers across calls);
* both use one sampler (``--workers`` decoder processes, decord where installed, else PyAV, no
  frame cache), ``--frames`` uniform frames a clip, best of ``--repeat`` interleaved rounds;
  the decoded clip counts are exact;
* the run: ``abduct eval blackswan-mcq --model blackswan-colour`` on the same corpus (no cache,
  quiet): results.json's total seconds against the model's own seconds (its decoding and
  colour counting), i.e. what loading, planning, scoring, intervals and pages add.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
import time
from pathlib import Path
from typing import Any


def _questions(data: Path) -> list[Any]:
    from abduct import Settings, Spec
    from abduct_blackswan.dataset import make_mcq_dataset, make_yn_dataset
    from abduct_blackswan.inputs import question_input

    questions = [*make_mcq_dataset(Spec("blackswan-mcq"), Settings()).load(data, "validation"),
                 *make_yn_dataset(Spec("blackswan-yn"), Settings()).load(data, "validation")]
    return [question_input(q.task, q.clips, None, "video") for q in questions]


def _clips(visual: Any) -> list[str]:
    return [visual.media, *(clip for r in visual.related for clip in _clips(r))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=24)
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    say = (lambda *_: None) if args.json else print

    from abduct.host import EvalConfig, run_evaluation
    from abduct_blackswan.synth import synthesize
    from abduct_video import FrameSampler, SamplingSettings

    with tempfile.TemporaryDirectory(prefix="blackswan-bench-") as scratch:
        data = Path(scratch) / "data"
        synthesize(data, args.videos, 0)
        visuals = _questions(data)
        shown = [clip for v in visuals for clip in _clips(v)]
        say(f"{len(visuals)} questions over {args.videos} videos show {len(shown)} clips, {len(set(shown))} distinct")
        backend = "decord" if importlib.util.find_spec("decord") is not None else "pyav"
        settings = SamplingSettings(frames_per_span=args.frames)
        best = {"per question": float("inf"), "shared": float("inf")}
        decoded: dict[str, int] = {}
        with FrameSampler(settings, backend=backend, workers=args.workers) as sampler:
            sampler.frames(visuals[0])  # workers started before timing
            for _ in range(args.repeat):
                for method in best:
                    before, started = sampler.decoded_spans, time.perf_counter()
                    if method == "per question":
                        frames = [sampler.frames(v) for v in visuals]
                    else:
                        frames = sampler.frames_many(visuals)
                    best[method] = min(best[method], time.perf_counter() - started)
                    decoded[method] = sampler.decoded_spans - before
                    assert len(frames) == len(visuals)
        ratio = best["per question"] / best["shared"]
        for method, seconds in best.items():
            say(f"{method:>12}: {seconds:.3f} s, {decoded[method]} clips decoded")
        say(f"shared over per question: {ratio:.2f}x faster")

        out = Path(scratch) / "run"
        results = run_evaluation(EvalConfig(task="blackswan-mcq", model="blackswan-colour", data_dir=data,
                                            out_dir=out, quiet=True, use_cache=False))
        timings = results["timings"]
        overhead = timings["total_seconds"] / timings["model_seconds"]
        say(f"abduct eval: {timings['total_seconds']:.2f} s in all, the model's own pass "
            f"{timings['model_seconds']:.2f} s: {overhead:.2f}x")
    report = {"questions": len(visuals), "clips_shown": len(shown), "clips_distinct": len(set(shown)),
              "backend": backend, "workers": args.workers, "frames": args.frames,
              "per_question": {"seconds": best["per question"], "decoded": decoded["per question"]},
              "shared": {"seconds": best["shared"], "decoded": decoded["shared"]}, "speedup": ratio,
              "run": {"total_seconds": timings["total_seconds"], "model_seconds": timings["model_seconds"],
                      "total_over_model": overhead}}
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
