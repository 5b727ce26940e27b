"""The demo's ``var`` section: a synthetic VAR corpus, the small generator trained briefly, and
the random, retrieval and trained rows on var-explanation (about a minute on 2 cores)."""

from __future__ import annotations

import time

from abduct_demo import DemoContext, DemoTable

SECTION = "var"
EXAMPLES = 96
STEPS = 500
TASK = "var-explanation,meteor=false"  # METEOR's Java start-up would be most of each run
COLUMNS = [(TASK, "bleu_4"), (TASK, "rouge_l"), (TASK, "cider")]


def var_section(ctx: DemoContext) -> DemoTable:
    from abduct_var._train import TrainConfig, train
    from abduct_var.synth import synthesize

    data = ctx.dir(SECTION) / "data"
    if not (data / "var_train_v1.0.json").is_file():
        ctx.say(f"synthesising {EXAMPLES} training stories (mp4 videos of moving shapes)")
        synthesize(data, EXAMPLES, ctx.seed)
    steps = STEPS if ctx.steps is None else min(ctx.steps, STEPS)
    ctx.say(f"training the chain generator ({steps} steps)")
    started = time.perf_counter()
    out = ctx.dir(SECTION) / "train"
    train(TrainConfig(data_dir=data, out_dir=out, steps=steps, batch_size=32, checkpoint_every=steps,
                      log_every=max(1, steps // 5), seed=ctx.seed, device="cpu", quiet=True))
    ctx.say(f"training took {time.perf_counter() - started:.0f}s")
    models = {"random": "random", "retrieval": f"var-retrieval,data={data}", "trained": f"var-gen:{out / 'last.pt'}"}
    rows = ctx.evaluate(models, [TASK], data, section=SECTION)
    note = ("var-explanation on the synthetic val split, eval kit scale (x100; CIDEr-D up to 1000), METEOR left out "
            "for time. retrieval = the nearest training chain by clip:tiny frame embedding; trained = "
            f"`abduct train var` for {steps} steps over frozen clip:tiny frame embeddings.")
    return DemoTable("VAR: explaining the masked event", COLUMNS, rows, note=note)
