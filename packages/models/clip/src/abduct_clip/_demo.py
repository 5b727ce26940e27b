"""The demo's ``sherlock-clip`` section: fine-tune ``clip:tiny`` on the synthetic Sherlock
corpus on the CPU, then compare the random baseline, the untrained model and the fine-tuned
model on the three Sherlock tasks (about 200 CPU seconds: its training keeps 2 cores busy)."""

from __future__ import annotations

import time

from abduct_demo import DemoContext, DemoTable, require_module

SECTION = "sherlock-clip"
TASKS = ("sherlock-retrieval", "sherlock-localization", "sherlock-comparison")
COLUMNS = [("sherlock-retrieval", "p_at_1"), ("sherlock-retrieval", "im2txt"), ("sherlock-retrieval", "txt2im"),
           ("sherlock-localization", "gt_accuracy"), ("sherlock-localization", "auto_accuracy"),
           ("sherlock-comparison", "accuracy")]
# Sized for a 2-core CPU: 350 steps and one validation take about 130 CPU seconds (until
# 2026-11-26: 500 steps and four validations; see docs/demo-figures.md).
# Localization is what needs the steps: GT accuracy 38 after 200, 53 after 300, 55 after 350,
# 63 after 400, 66 after 500 (untrained 27); a larger learning rate or a batch of 16 learns it
# slower still.
DEMO_STEPS = 350
DEMO_BATCH = 32
DEMO_LR = 5e-4
DEMO_WARMUP = 40


def sherlock_clip(ctx: DemoContext) -> DemoTable:
    from abduct_clip._train import BEST, TrainConfig, train_from_data_dir

    synth = require_module("abduct_sherlock.synth", "abduct-sherlock",
                           "abduct demo uses Sherlock's synthetic corpus and tasks")
    data = synth.demo_corpus(ctx)
    steps = ctx.steps or DEMO_STEPS
    ctx.say(f"fine-tuning clip:tiny on the CPU ({steps} steps)")
    started = time.perf_counter()
    train_dir = ctx.dir(SECTION) / "train"
    train_from_data_dir(TrainConfig(
        data_dir=data, out_dir=train_dir, model="clip:tiny", steps=steps, batch_size=DEMO_BATCH, lr=DEMO_LR,
        # one validation, at the end: best.pt is then the last step (the steps before it are not
        # changed by validating, so neither are the digits), and three validations less
        warmup=DEMO_WARMUP, checkpoint_every=steps, log_every=50, seed=ctx.seed, device="cpu",
        quiet=ctx.quiet,
    ))
    ctx.say(f"fine-tuning took {time.perf_counter() - started:.0f}s")
    models = {"random": "random", "zero_shot": "clip:tiny", "fine_tuned": f"clip:{train_dir / BEST}"}
    rows = ctx.evaluate(models, TASKS, data, section=SECTION)
    return DemoTable("Sherlock with CLIP (the region drawn on the image)", COLUMNS, rows,
                     note="zero_shot = clip:tiny before fine-tuning (random weights); fine_tuned = after.")
