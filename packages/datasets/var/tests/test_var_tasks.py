"""The tasks through the runner: the contract with random, the submission file they write, the
per-position details, and what a missing, a corrupt and an overlong video do."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from abduct.host import EvalConfig, run_evaluation
from abduct_testing import TaskContract, main
from abduct_testing.browser import page_views
from abduct_var.loader import load_split
from abduct_var.records import VarExample
from abduct_var.submission import load_submission, validate_against

TASK = "var-explanation,meteor=false"  # METEOR's Java start-up would dominate these small runs


class TestExplanationContract(TaskContract):
    task_name = f"{TASK},frames=false"  # five runs: frame strips are checked below, once per setting

    def make_data(self, tmp_path: Path) -> Path:
        from abduct_var.synth import synthesize

        synthesize(tmp_path, examples=36, seed=2)  # 10 val examples: two units of 8 events
        return tmp_path


def _eval(task: str, model: str, data: Path, out: Path) -> dict[str, object]:
    return run_evaluation(EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True, use_cache=False))


@pytest.mark.parametrize("task, which", [("var", "all"), ("var-premise,meteor=false", "premise"), (TASK, "hypothesis")])
def test_submission_is_valid_and_scores_as_the_run(corpus: Path, tmp_path: Path, task: str, which: str) -> None:
    results = _eval(task, "random", corpus, tmp_path / "run")
    submission = tmp_path / "run" / "submission.json"
    examples, _ = load_split(corpus, "val")
    entries = load_submission(submission)
    assert validate_against(entries, examples, which=which) == []
    metrics = results["metrics"]
    assert isinstance(metrics, dict)
    assert metrics["n_events"] == len(entries)
    from abduct_var.scoring import score_entries

    official = score_entries(entries, separate=which == "all", meteor=task == "var")
    assert {k: metrics[k] for k in official["all"]} == official["all"]
    if which == "all":
        assert metrics["hypothesis_cider"] == official["hypothesis"]["cider"]
        assert metrics["observed_bleu_4"] == official["observed"]["bleu_4"]
    details = results["details"]
    assert isinstance(details, dict)
    records = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert {"example_id", "position", "is_hypothesis", "metrics"} <= set(records[0])
    positions = {str(r["position"]) for r in records}  # the event's place in its chain
    assert set(details["per_position"]) == positions == set(details["by_position"])
    assert sum(row["n"] for row in details["by_position"].values()) == len(entries)
    assert "several videos" in details["by_videos"]  # the synthetic corpus has a two-video chain
    chains = {x.id: x for x in examples}
    for view, record in zip(page_views(tmp_path / "run"), records):  # samples.html: generated beside the chain
        chain = chains[record["example_id"]]
        generated, *events = view["texts"]
        assert generated["text"] == record["prediction"] and [e["text"] for e in events] == \
            [e.sentence.strip() for e in chain.counted]
        assert "masked" in events[chain.hypothesis]["label"] and "this event" in events[record["position"]]["label"]
        assert view["category"] == ("hypothesis" if record["is_hypothesis"] else "premise")
        assert view["score"] == pytest.approx(record["metrics"]["cider"], abs=1e-2)  # as results.json
        _check_strips(view, chain, tmp_path / "run")
    shown = details["examples"]  # report.html shows generated sentences beside their references
    sentences = {(e.sentence, e.gt_sentence) for e in entries}
    assert shown and all((x["lines"][0].removeprefix("generated: "), x["lines"][1].removeprefix("reference: "))
                         in sentences for x in shown)
    assert shown[0]["lines"][0] in (tmp_path / "run" / "report.html").read_text().replace("&#x27;", "'")
    if which == "all":
        _check_intervals(results, tmp_path / "run")


def _check_strips(view: dict[str, Any], chain: VarExample, run: Path) -> list[dict[str, Any]]:
    """One frame strip per event of the chain, in order, each a JPEG of 96 px high in the run's
    samples/ folder; the hypothesis's labelled as frames the model was not shown. Returns the
    images without one."""
    from PIL import Image

    from abduct_var._strips import STRIP_FRAMES, STRIP_HEIGHT

    images = view["images"]
    assert len(images) == len(chain.counted)
    assert all(f"event {i + 1} (" in image["caption"] for i, image in enumerate(images))
    assert "masked: frames the model was not shown" in images[chain.hypothesis]["caption"]
    for image in images:
        if image["thumb"] is not None:
            with Image.open(run / image["thumb"]) as strip:
                assert (strip.format, strip.height) == ("JPEG", STRIP_HEIGHT) and strip.width >= STRIP_FRAMES * 32
    return [image for image in images if image["thumb"] is None]


def _check_intervals(results: dict[str, object], run: Path) -> None:
    """From predictions.jsonl and units.json alone: the video examples drawn by scipy.stats.bootstrap
    on the run's stream, CIDEr-D as the per-event mean of the drawn examples' events, BLEU-4 as
    pycocoevalcap's formula on their summed statistics, give what results.json reports."""
    import numpy as np
    from scipy import stats

    from abduct.host import interval_rng as rng_for

    records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    examples = list(dict.fromkeys(r["example_id"] for r in records))
    assert len(examples) < len(records)  # several events per example: the unit is not the event
    cider = np.array([sum(r["metrics"]["cider"] for r in records if r["example_id"] == x) for x in examples])
    events = np.array([sum(1.0 for r in records if r["example_id"] == x) for x in examples])
    units = json.loads((run / "units.json").read_text())
    rows = np.array(units["bleu_4"]["values"])
    assert units["bleu_4"]["ids"] == examples and rows.shape == (len(examples), 10)

    def bleu_4(index: np.ndarray) -> float:
        total = rows[index.astype(int)].sum(axis=0)
        score = np.prod((total[6:10] + 1e-15) / (total[2:6] + 1e-9)) ** 0.25
        ratio = (total[0] + 1e-15) / (total[1] + 1e-9)
        return float(100 * score * (np.exp(1 - 1 / ratio) if ratio < 1 else 1.0))

    metrics, intervals = results["metrics"], results["intervals"]
    assert isinstance(metrics, dict) and isinstance(intervals, dict)
    assert cider.sum() / events.sum() == pytest.approx(metrics["cider"])  # the records' values are x100
    assert bleu_4(np.arange(len(examples))) == pytest.approx(metrics["bleu_4"])
    cases = [("cider", (cider, events), lambda c, n: c.sum() / n.sum()),
             ("bleu_4", (np.arange(len(examples)),), bleu_4)]
    for name, data, statistic in cases:
        ref = stats.bootstrap(data, statistic, paired=True, vectorized=False, n_resamples=1000, method="percentile",
                              rng=rng_for(0, name))
        found = intervals[name]
        assert found["unit"] == "video example" and found["units"] == len(examples)
        assert (found["low"], found["high"]) == pytest.approx(tuple(ref.confidence_interval), abs=1e-9)
    assert {"bleu_1", "meteor", "rouge_l", "observed_cider", "hypothesis_bleu_4"} <= set(intervals)


def _copy_corpus(corpus: Path, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "videos").mkdir(parents=True)
    for file in corpus.glob("var_*.json"):
        (data / file.name).write_text(file.read_text())
    for video in (corpus / "videos").iterdir():
        (data / "videos" / video.name).write_bytes(video.read_bytes())
    return data


def _errors(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """stderr's lines but the one-line warnings: a video clipped while training warns once per
    process, so whether that line shows depends on which tests ran before."""
    return [line for line in capsys.readouterr().err.strip().splitlines() if not line.startswith("warning: ")]


def test_missing_and_corrupt_videos_exit_2_naming_the_file(corpus: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    data = _copy_corpus(corpus, tmp_path)
    model = f"var-retrieval,data={data}"
    victim = data / "videos" / "val0000.mp4"
    victim.unlink()
    assert main(["eval", TASK, "--model", model, "--data", str(data), "--out", str(tmp_path / "a"), "--quiet"]) == 2
    err = _errors(capsys)
    assert len(err) == 1 and str(victim) in err[0]
    victim.write_bytes(b"\x00\x00\x00\x18ftypmp42 this is not a video" * 50)
    assert main(["eval", TASK, "--model", model, "--data", str(data), "--out", str(tmp_path / "b"), "--quiet"]) == 2
    err = _errors(capsys)
    assert len(err) == 1 and str(victim) in err[0]
    from abduct_video.testing import write_stalling_video

    write_stalling_video(victim)  # a regular file that hangs the decoder: the time limit ends it
    started = time.monotonic()
    assert main(["eval", TASK, "--model", f"{model},decode_timeout=2", "--data", str(data), "--out",
                 str(tmp_path / "c"), "--quiet"]) == 2
    err = _errors(capsys)
    assert len(err) == 1 and err[0].startswith(f"error: {victim}: decoding did not finish within 2 s"), err
    assert time.monotonic() - started < 60 and not (tmp_path / "c" / "results.json").exists()


def test_frame_strips_load_in_chromium_and_a_bad_video_only_loses_its_own(corpus: Path, tmp_path: Path) -> None:
    from abduct_testing.browser import browser_or_skip, samples_browser, view

    executable = browser_or_skip()
    data = _copy_corpus(corpus, tmp_path)
    (data / "videos" / "val0000.mp4").unlink()
    (data / "videos" / "val0002.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42 this is not a video" * 50)
    cache = tmp_path / "cache"  # the run's cache keeps the strips; the other tests run without one
    results = run_evaluation(EvalConfig(task=TASK, model="random", data_dir=data, out_dir=tmp_path / "run", quiet=True,
                                        cache_dir=cache))
    examples = {x.id: x for x in load_split(data, "val")[0]}
    bad = {"val0000", "val0002"}
    views = page_views(tmp_path / "run")
    for shown in views:
        chain = examples[shown["fields"]["example"]]
        missing = _check_strips(shown, chain, tmp_path / "run")
        assert len(missing) == sum(e.video_id in bad for e in chain.counted)
        assert all("no frames: video missing or unreadable" in image["caption"] for image in missing)
    strips = results["details"]["frame_strips"]
    assert strips["strips"] == sum(e.video_id not in bad for e in {(e.video_id, e.span): e for x in examples.values()
                                                                    for e in x.counted}.values()) > 0
    assert len(list((cache / "var-frames").glob("*.jpg"))) == strips["strips"]
    with samples_browser(executable) as tab:
        state = view(tab, tmp_path / "run" / "samples.html")
    shown_ids = set(state.ids)
    assert state.images == sum(1 for v in views if v["id"] in shown_ids for i in v["images"] if i["thumb"]) > 0
    assert state.broken_images == [] and state.console_errors == [] and state.outside_requests == []
    off = _eval(f"{TASK},frames=false", "random", data, tmp_path / "off")
    assert "frame_strips" not in off["details"] and not any(v.get("images") for v in page_views(tmp_path / "off"))


def test_frame_strips_stop_at_the_cap_are_reused_and_follow_an_edited_video(corpus: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from abduct_var import _strips

    monkeypatch.setattr(_strips, "MAX_STRIPS", 3)
    events = [(str(corpus / "videos" / f"{e.video_id}.mp4"), e.span) for x in load_split(corpus, "val")[0] for e in x.counted]
    first = _strips.frame_strips(events, tmp_path)
    assert list(first) == list(dict.fromkeys(events))[:3] and all(p is not None and p.is_file() for p in first.values())
    stamps = {p: p.stat().st_mtime_ns for p in first.values() if p is not None}
    assert _strips.frame_strips(events, tmp_path) == first  # the same files, not drawn again
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    video = Path(events[0][0])
    copy = tmp_path / "copy.mp4"
    copy.write_bytes(video.read_bytes())
    before = _strips.frame_strips([(str(copy), events[0][1])], tmp_path)
    os.utime(copy, ns=(copy.stat().st_atime_ns, copy.stat().st_mtime_ns + 10**9))  # an edited video: a new strip
    assert _strips.frame_strips([(str(copy), events[0][1])], tmp_path) != before


def test_a_span_past_the_end_is_clipped_with_one_warning_per_video(corpus: Path) -> None:
    from abduct_var._encode import EventEncoder
    from abduct_video import SpanClippedWarning

    examples, _ = load_split(corpus, "train")
    quirky = next(x for x in examples if any(e.end > e.duration for e in x.events))
    path = str(corpus / "videos" / f"{quirky.events[0].video_id}.mp4")
    spans = [e.span for e in quirky.events]
    encoder = EventEncoder("clip:tiny", frames=2)
    try:
        with pytest.warns(SpanClippedWarning) as caught:
            vectors = encoder.encode([(path, span) for span in spans])
    finally:
        encoder.close()
    assert len([w for w in caught if issubclass(w.category, SpanClippedWarning)]) == 1
    assert vectors.shape == (len(spans), encoder.dim)


def test_a_clipped_video_is_warned_once_per_command_whatever_reads_it(corpus: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The demo's VAR section trains (one frame sampler) and then evaluates the retrieval and the
    trained models (one sampler each) in one process: each sampler warns once per video, and the
    pages written between them (abduct-report's plots, the frame strips) enter catch_warnings,
    after which Python shows a warning it has shown before again: the same clipped video was
    warned about twice. One command shows it once."""
    import warnings

    import click

    from abduct import hookimpl
    from abduct.host import build_registry, reset_registry
    from abduct_video import FrameSampler, SamplingSettings

    examples, _ = load_split(corpus, "train")
    quirky = next(x for x in examples if any(e.end > e.duration for e in x.events))
    events = [(str(corpus / "videos" / f"{e.video_id}.mp4"), e.span) for e in quirky.events]

    @click.command("encode-twice")
    def encode_twice() -> None:
        for _ in range(2):  # as training and then a model would, each with its event encoder's sampler
            with FrameSampler(SamplingSettings(mode="uniform", frames_per_span=2), backend="pyav") as sampler:
                sampler.sample_many([(path, [span]) for path, span in events])
            with warnings.catch_warnings():  # as a run's pages do
                warnings.simplefilter("ignore", UserWarning)

    class Twice:
        @hookimpl
        def register_commands(self, cli: click.Group) -> None:
            cli.add_command(encode_twice)

    reset_registry(build_registry(extra_plugins=[("twice", Twice())]))
    try:
        assert main(["encode-twice"]) == 0
    finally:
        reset_registry()
    warned = [line for line in capsys.readouterr().err.splitlines() if "end past the video's end" in line]
    assert len(warned) == 1 and warned[0].startswith(f"warning: {events[0][0]}"), warned


def _predictions(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]


def test_the_dataset_option_videos_changes_what_the_tasks_read(corpus: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``--dataset var,videos=DIR``: the chains' videos are read from DIR, not DATA/videos: a
    model that watches them predicts other sentences, the frame strips come from there, and
    ``abduct check var`` looks there."""
    examples, _ = load_split(corpus, "val")
    swapped = tmp_path / "swapped"  # each val video replaced by a training story's video
    swapped.mkdir()
    train = sorted((corpus / "videos").glob("train*.mp4"))
    for i, video_id in enumerate(sorted({e.video_id for x in examples for e in x.events})):
        (swapped / f"{video_id}.mp4").write_bytes(train[(i + 3) % len(train)].read_bytes())
    model = f"var-retrieval,data={corpus}"
    for name, extra in (("default", []), ("swapped", ["--dataset", f"var,videos={swapped}"])):
        assert main(["eval", f"{TASK},frames=false", "--model", model, "--data", str(corpus), "--out",
                     str(tmp_path / name), "--quiet", "--no-cache", *extra]) == 0
    default, moved = _predictions(tmp_path / "default"), _predictions(tmp_path / "swapped")
    assert [r["id"] for r in default] == [r["id"] for r in moved]
    assert [r["prediction"] for r in default] != [r["prediction"] for r in moved]
    assert json.loads((tmp_path / "default" / "results.json").read_text())["metrics"] != \
        json.loads((tmp_path / "swapped" / "results.json").read_text())["metrics"]

    empty = tmp_path / "empty"  # no videos at all: random still runs (it watches none), no strip is drawn
    empty.mkdir()
    results = {"default": _eval(TASK, "random", corpus, tmp_path / "random-default"),
               "empty": run_evaluation(EvalConfig(task=TASK, model="random", data_dir=corpus, quiet=True, use_cache=False,
                                                  out_dir=tmp_path / "random-empty", datasets=(f"var,videos={empty}",)))}
    strips = {name: r["details"]["frame_strips"] for name, r in results.items()}
    assert strips["default"]["strips"] == strips["default"]["events"] > 0 and strips["empty"]["strips"] == 0
    for shown in page_views(tmp_path / "random-empty"):
        assert all("no frames: video missing or unreadable" in image["caption"] and ".mp4)" in image["caption"]
                   and str(tmp_path) not in image["caption"] for image in shown["images"])  # the file named, no path

    capsys.readouterr()
    assert main(["check", "var-explanation", "--data", str(corpus), "--dataset", f"var,videos={empty}", "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)
    assert problems and all(f"missing ({empty}/" in p for p in problems)


@pytest.mark.parametrize("argv, needle", [
    (["eval", "var-explanation,videos=V", "--model", "random"], "has no option 'videos'"),
    (["eval", "var,separate=true", "--model", "random"], "abduct score var --separate"),
    (["eval", "var-premise,separate=false", "--model", "random"], "abduct score var --separate"),
    (["eval", "var-premise", "--model", "random", "--dataset", "var,videos=NOWHERE"], "NOWHERE"),
    (["eval", "var-premise", "--model", "random", "--dataset", "var,vidoes=V"], "vidoes"),
])
def test_an_option_the_task_cannot_use_is_one_line(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   argv: list[str], needle: str) -> None:
    """``videos`` is the dataset's option now, ``separate`` only scoring's: given to the task (or a
    video folder that is not there) they stop the run with one line before any model runs."""
    capsys.readouterr()
    argv = [a.replace("NOWHERE", str(tmp_path / "nowhere")) for a in argv]
    assert main([*argv, "--data", str(corpus), "--out", str(tmp_path / "run"), "--quiet", "--no-cache"]) == 2
    err = _errors(capsys)
    assert len(err) == 1 and needle.replace("NOWHERE", str(tmp_path / "nowhere")) in err[0], err
    assert not (tmp_path / "run" / "results.json").exists()


def test_the_tasks_declare_and_keep_no_state(corpus: Path) -> None:
    """plan() and finish() by hand: the stages keep today's names (resume keys), finish returns
    the submission as an artifact, and the task object is the same afterwards."""
    from abduct import Custom, Generate, Generated, RunInfo
    from abduct.host import build_registry
    from abduct_var.dataset import VarDataset

    registry = build_registry()
    examples = VarDataset().load(corpus, "val")
    assert all(Path(e.path).is_absolute() for x in examples for e in x.events)
    assert examples[0].pool is not None and examples[0].pool.split == "train"
    for name, stage in (("var,meteor=false", "all"), ("var-explanation,meteor=false,frames=false", "hypothesis"),
                        ("var-premise,meteor=false", "premise")):
        task = registry.create("task", name)
        before = dict(vars(task))
        run = RunInfo(split="val", model_name="x", scores=False, generates=True, judged=False,
                      metric=lambda *a, **k: None, corpus=examples)
        stages = task.plan(examples[:2], run)
        assert stages[0].name == stage and isinstance(stages[0].request, Generate)
        assert [s.name for s in stages[1:]] == ([] if "frames=false" in name else ["frames"])
        assert all(isinstance(s.request, Custom) and not s.request.needs for s in stages[1:])
        generate = stages[0].request
        assert isinstance(generate, Generate)
        records = {stage: [Generated(item.id, item.references[0], list(item.references)) for item in generate.items]}
        evaluation = task.finish(examples[:2], records, run)
        assert set(evaluation.artifacts) == {"submission.json"} and evaluation.metrics["rouge_l"] == pytest.approx(100)
        assert vars(task) == before


@pytest.mark.parametrize("damage", ["truncated", "empty", "garbled", "directory"])
def test_a_damaged_kept_strip_is_said_once_and_drawn_again(corpus: Path, tmp_path: Path, damage: str) -> None:
    import warnings

    from abduct.kit.cache import CacheWarning
    from abduct_var import _strips

    event = next((str(corpus / "videos" / f"{e.video_id}.mp4"), e.span) for x in load_split(corpus, "val")[0]
                 for e in x.counted)
    strip = _strips.frame_strips([event], tmp_path)[event]
    assert strip is not None
    clean = strip.read_bytes()
    if damage == "directory":
        strip.unlink()
        strip.mkdir()
    else:
        strip.write_bytes({"truncated": clean[: len(clean) // 2], "empty": b"",
                           "garbled": clean[:2] + bytes(len(clean) - 4) + clean[-2:]}[damage])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = _strips.frame_strips([event], tmp_path)[event]
    said = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(said) == 1 and str(strip) in said[0], said
    assert again == strip and strip.read_bytes() == clean  # drawn again, the same strip
