"""The demo's ``visualriddles`` section: a synthetic release, and random with and without the
image (``image=false``: the text-only row) on the multiple choice and the judge task. A few
seconds: no model to train."""

from __future__ import annotations

from abduct_demo import DemoContext, DemoTable

SECTION = "visualriddles"
RIDDLES = 40
TASKS = ("visualriddles-mcq", "visualriddles-judge")
COLUMNS = [("visualriddles-mcq", "accuracy"), ("visualriddles-mcq", "cannot_determine"),
           ("visualriddles-mcq", "accuracy_without_cd"), ("visualriddles-judge", "accuracy"),
           ("visualriddles-judge", "kappa")]


def visualriddles_section(ctx: DemoContext) -> DemoTable:
    from abduct_visualriddles.synth import synthesize

    data = ctx.dir(SECTION) / "data"
    if not (data / "test" / "metadata.csv").is_file():
        ctx.say(f"synthesising {RIDDLES} riddles")
        synthesize(data, RIDDLES, ctx.seed)
    rows = ctx.evaluate({"random": "random"}, list(TASKS), data, section=SECTION)
    blind = ctx.evaluate({"text-only": "random"}, [f"{t},image=false" for t in TASKS], data, section=SECTION)
    rows["text-only"] = {t: blind["text-only"][f"{t},image=false"] for t in TASKS}
    note = ("synthetic release. text-only = the same prompts without the picture (image=false). Chance: 20 % on "
            "the five options; a random judge's kappa against the human labels is 0 in expectation (on 120 judged answers it strays far from it). "
            "visualriddles-open needs --judge SPEC and is not in this table.")
    return DemoTable("Visual Riddles: multiple choice and a judge against human labels", COLUMNS, rows, note=note)
