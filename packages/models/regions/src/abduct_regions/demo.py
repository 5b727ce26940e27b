"""The demo sections ``sherlock-lxmert`` and ``sherlock-uniter``: a tiny cross-encoder
trained a few hundred steps with the triplet loss on the synthetic Sherlock corpus, beside the
random baseline, on the three Sherlock tasks (about a minute each on 2 CPU cores)."""

from __future__ import annotations

import time

from abduct_demo import DemoContext, DemoTable, require_module
from abduct_regions.family import Family
from abduct_regions.training import LAST, TrainConfig, train

TASKS = ("sherlock-retrieval", "sherlock-localization", "sherlock-comparison")
COLUMNS = [("sherlock-retrieval", "p_at_1"), ("sherlock-retrieval", "im2txt"), ("sherlock-retrieval", "txt2im"),
           ("sherlock-localization", "gt_accuracy"), ("sherlock-localization", "auto_accuracy"),
           ("sherlock-comparison", "accuracy")]
# Sized for a 2-core CPU.
DEMO_STEPS = 300
DEMO_BATCH = 16
DEMO_LR = 2e-3
DEMO_WARMUP = 20


def cross_encoder_section(ctx: DemoContext, family: Family, title: str) -> DemoTable:
    synth = require_module("abduct_sherlock.synth", "abduct-sherlock",
                           "abduct demo uses Sherlock's synthetic corpus and tasks")
    data = synth.demo_corpus(ctx)
    section = f"sherlock-{family.name}"
    steps = min(ctx.steps or DEMO_STEPS, DEMO_STEPS * 10)
    ctx.say(f"training {family.name}:tiny with the triplet loss on the CPU ({steps} steps)")
    started = time.perf_counter()
    out = ctx.dir(section) / "train"
    train(family, TrainConfig(data_dir=data, out_dir=out, model=f"{family.name}:tiny", steps=steps,
                              batch_size=DEMO_BATCH, lr=DEMO_LR, warmup=DEMO_WARMUP, checkpoint_every=steps,
                              val_limit=48, log_every=100, seed=ctx.seed, device="cpu", quiet=ctx.quiet))
    ctx.say(f"training took {time.perf_counter() - started:.0f}s")
    models = {"random": "random", "trained": f"{family.name}:{out / LAST}"}
    rows = ctx.evaluate(models, TASKS, data, section=section)
    return DemoTable(title, COLUMNS, rows,
                     note=f"trained = {family.name}:tiny after {steps} triplet-loss steps; one forward pass per "
                          "(image, region, clue, inference) pair.")
