"""The demo's ``nycc`` section: a tiny fake release, and the chance rows of the three tasks —
random, and ``constant`` (every caption scored alike: ties go to the first caption, ``A``) —
each the unweighted mean over the five folds, as the official scorer reports it. Seconds."""

from __future__ import annotations

from abduct_demo import DemoContext, DemoTable

SECTION = "nycc"
COLUMNS = [("nycc-matching", "accuracy"), ("nycc-ranking", "accuracy_overall"), ("nycc-ranking", "accuracy_crowd"),
           ("nycc-ranking", "accuracy_ny")]


def nycc_section(ctx: DemoContext) -> DemoTable:
    from abduct_nycc.synth import synthesize

    data = ctx.dir(SECTION) / "data"
    if not (data / "SYNTHETIC").is_file():
        ctx.say("synthesising a fake release (30 configs' test splits)")
        synthesize(data, 8, ctx.seed)
    rows = ctx.evaluate({"random": "random", "constant (ties: A)": "constant"}, ["nycc-matching", "nycc-ranking"],
                        data, section=SECTION)
    explained = ctx.evaluate({"random": "random"}, ["nycc-explanation"], data, section=SECTION)
    rows["random"].update(explained["random"])
    note = ("fold=all on the synthetic release: each figure is the unweighted mean of the five folds' test figures. "
            "random explanations are other folds' references; their BLEU / ROUGE-L (bootstrap median) are in "
            "the runs.")
    return DemoTable("New Yorker Caption Contest: chance rows over five folds", COLUMNS, rows, note=note)
