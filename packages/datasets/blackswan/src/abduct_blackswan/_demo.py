"""The demo's ``blackswan`` section: a synthetic corpus, and three rows on blackswan-mcq and
blackswan-yn: random (chance), the colour probe without the video (``setup=text``: the
text-only row) and with it. A few seconds on 2 cores: no training."""

from __future__ import annotations

from abduct_demo import DemoContext, DemoTable

SECTION = "blackswan"
VIDEOS = 24
TASKS = ("blackswan-mcq", "blackswan-yn")
COLUMNS = [("blackswan-mcq", "accuracy"), ("blackswan-mcq", "detective_accuracy"),
           ("blackswan-mcq", "reporter_accuracy"), ("blackswan-yn", "accuracy")]


def blackswan_section(ctx: DemoContext) -> DemoTable:
    from abduct_blackswan.synth import synthesize

    data = ctx.dir(SECTION) / "data"
    if not (data / "MCQ" / "BlackSwanSuite_MCQ_Val.jsonl").is_file():
        ctx.say(f"synthesising {VIDEOS} videos per split (three mp4 clips each)")
        synthesize(data, VIDEOS, ctx.seed)
    rows = ctx.evaluate({"random": "random", "colour probe": "blackswan-colour"}, list(TASKS), data, section=SECTION)
    blind = ctx.evaluate({"text-only": "blackswan-colour"}, [f"{t},setup=text" for t in TASKS], data, section=SECTION)
    rows = {"random": rows["random"], "text-only": {t: blind["text-only"][f"{t},setup=text"] for t in TASKS},
            "colour probe": rows["colour probe"]}
    note = ("validation split of the synthetic corpus. text-only = the colour probe shown the question and options "
            "without the video (setup=text). The probe reads the splash's colour: a Reporter sees it, a Detective "
            "only what the ball keeps, nothing on hard videos (so its Detective accuracy stays below its Reporter's).")
    return DemoTable("BlackSwan: does the video reach the model?", COLUMNS, rows, note=note)
