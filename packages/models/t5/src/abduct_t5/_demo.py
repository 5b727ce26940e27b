"""The demo's ``sherlock-t5`` section: ``t5:tiny`` fine-tuned a few hundred Adafactor steps on
the synthetic Sherlock corpus's clue -> inference pairs (about a minute on 2 cores), against
random, on comparison (reading the clue only) and, with abduct-metrics, on generation."""

from __future__ import annotations

import importlib.util
import time

from abduct.kit import install_command
from abduct_demo import DemoContext, DemoTable, require_module

SECTION = "sherlock-t5"
T5_STEPS = 300
T5_BATCH = 32
COLUMNS = [("sherlock-comparison", "accuracy"), ("sherlock-generation", "bleu4"), ("sherlock-generation", "cider"),
           ("sherlock-generation", "rouge_l"), ("sherlock-generation", "meteor")]


def sherlock_t5(ctx: DemoContext) -> DemoTable:
    from abduct_t5._train import BEST, TrainConfig, train_from_data_dir

    synth = require_module("abduct_sherlock.synth", "abduct-sherlock",
                           "abduct demo uses Sherlock's synthetic corpus and tasks")
    data = synth.demo_corpus(ctx)
    steps = T5_STEPS if ctx.steps is None else min(ctx.steps, T5_STEPS)
    ctx.say(f"fine-tuning t5:tiny on the clues ({steps} steps)")
    started = time.perf_counter()
    train_dir = ctx.dir(SECTION) / "train"
    train_from_data_dir(TrainConfig(data_dir=data, out_dir=train_dir, model="t5:tiny", steps=steps,
                                    batch_size=T5_BATCH, eval_every=max(1, steps // 3), log_every=50, seed=ctx.seed,
                                    device="cpu", quiet=True))
    ctx.say(f"fine-tuning took {time.perf_counter() - started:.0f}s")
    tasks = ["sherlock-comparison"]
    note = ("t5_fine_tuned = t5:tiny after fine-tuning on clue -> inference, reading the clue only; "
            "generation: x100 as every text metric (CIDEr-D up to 1000), random picks training inferences.")
    if importlib.util.find_spec("abduct_metrics") is not None:
        tasks.append("sherlock-generation")
    else:
        note += f" Generation columns need abduct-metrics ({install_command('abduct-metrics')})."
    rows = ctx.evaluate({"random": "random", "t5_fine_tuned": f"t5:{train_dir / BEST}"}, tasks, data,
                        section=SECTION)
    return DemoTable("Sherlock with T5 (text only: the clue)", COLUMNS, rows, note=note)
