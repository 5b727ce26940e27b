"""abduct-vlm with NL-EYE and Sherlock (every package installed): a tiny VLM through the NL-EYE
triplet, pairs and explanation tasks and Sherlock generation and comparison; a served model
behind the fake OpenAI-compatible server (a rerun sends nothing); a judged run killed in the
middle resumes without asking a finished judgment again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from abduct import Settings
from abduct._engine.judging import boundary
from abduct.host import EvalConfig, build_registry, load_model, run_evaluation
from abduct_nleye import load_samples
from abduct_nleye.explanation import JUDGE_PROMPT, bem_question
from abduct_nleye.synth import synthesize as nleye_corpus
from abduct_sherlock.synth import synthesize as sherlock_corpus
from abduct_testing import finished_judgments
from abduct_vlm.prompts import tidy
from abduct_vlm.testing import FakeOpenAIServer, request_text
from conftest import abduct


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One cache directory for this module's runs (the tiny VLM is built there once)."""
    return {"ABDUCT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}


@pytest.fixture(scope="module")
def nleye(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nleye_corpus(tmp_path_factory.mktemp("nleye") / "data", samples=6, seed=0)


@pytest.fixture(scope="module")
def sherlock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sherlock_corpus(tmp_path_factory.mktemp("sherlock") / "data", images=6, seed=0, chunk_instances=10)


def _cli(task: str, model: str, data: Path, out: Path, env: dict[str, str], *extra: str) -> dict[str, Any]:
    run = abduct("eval", task, "--model", model, "--data", str(data), "--out", str(out), "--quiet", "--json",
                 "--batch-size", "4", *extra, env=env)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def _eval(task: str, model: str, data: Path, out: Path, cache: dict[str, str], **kw: Any) -> dict[str, Any]:
    os.environ.update(cache)
    config = EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True, batch_size=4,
                        cache_dir=Path(cache["ABDUCT_CACHE_DIR"]), **kw)
    return run_evaluation(config, build_registry())


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def test_nleye_triplet_and_sherlock_generation_from_the_cli(nleye: Path, sherlock: Path, cache: dict[str, str],
                                                            tmp_path: Path) -> None:
    triplet = _cli("nleye-triplet", "vlm:tiny,max_new_tokens=4", nleye, tmp_path / "t", cache)
    assert triplet["details"]["answered_by"] == "generation" and triplet["model"]["abilities"] == ["score", "generate"]
    records = _records(tmp_path / "t")
    assert len(records) == 6 and all(len(r["outputs"]) == 2 for r in records)
    assert triplet["metrics"]["unparsed"] == sum(len(r.get("unparsed", [])) for r in records)
    built = Path(cache["ABDUCT_CACHE_DIR"]) / "vlm" / "tiny-llava-v1"  # vlm:tiny, as a model directory
    generation = _cli("sherlock-generation", f"vlm:{built},max_new_tokens=6", sherlock, tmp_path / "g", cache,
                      "--limit", "8")
    assert {"bleu4", "cider", "rouge_l", "meteor"} <= set(generation["metrics"])
    assert generation["inputs"]["ignored"] == []  # image, highlighted region and clue all reach the model


def test_nleye_pairs_and_sherlock_comparison_by_likelihood(nleye: Path, sherlock: Path, cache: dict[str, str],
                                                           tmp_path: Path) -> None:
    pairs = _eval("nleye-pairs", "vlm:tiny", nleye, tmp_path / "p", cache)
    scores = [r["scores"] for r in _records(tmp_path / "p")]
    assert len(scores) == 6 and all(a != b for a, b in scores)  # the "yes" likelihood differs per hypothesis image
    assert 0.0 <= pairs["metrics"]["accuracy"] <= 100.0
    scored = _eval("nleye-triplet,answer=score", "vlm:tiny-qwen2-vl", nleye, tmp_path / "s", cache)
    assert scored["details"]["answered_by"] == "scores (pair)"
    comparison = _eval("sherlock-comparison", "vlm:tiny", sherlock, tmp_path / "c", cache, limit=2)
    assert {"accuracy", "human", "oracle"} <= set(comparison["metrics"]) and comparison["inputs"]["ignored"] == []


def test_too_many_images_is_one_line(nleye: Path, cache: dict[str, str], tmp_path: Path) -> None:
    run = abduct("eval", "nleye-triplet", "--model", "vlm:tiny,max_images=1", "--data", str(nleye), "--out",
                 str(tmp_path / "o"), "--quiet", env=cache)
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "takes at most 1 image(s) per prompt, and an input has 3" in run.stderr
    assert not (tmp_path / "o" / "results.json").exists()


def test_a_chat_template_tripping_the_sandbox_is_one_line(nleye: Path, cache: dict[str, str], tmp_path: Path) -> None:
    import shutil

    os.environ.update(cache)
    load_model("vlm:tiny", Settings(), build_registry())  # builds the tiny model into the cache, once
    hostile = tmp_path / "hostile"
    shutil.copytree(Path(cache["ABDUCT_CACHE_DIR"]) / "vlm" / "tiny-llava-v1", hostile)
    (hostile / "chat_template.jinja").write_text("{{ messages.__class__.__mro__[1].__subclasses__() }}")
    run = abduct("eval", "nleye-triplet", "--model", f"vlm:{hostile}", "--data", str(nleye), "--out",
                 str(tmp_path / "o"), "--quiet", env=cache)
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert f"the chat template ({hostile / 'chat_template.jinja'}) fails: SecurityError" in run.stderr
    assert not (tmp_path / "o" / "results.json").exists()


def test_a_served_model_runs_and_a_rerun_sends_nothing(nleye: Path, cache: dict[str, str], tmp_path: Path) -> None:
    with FakeOpenAIServer(latency=0.01) as fake:
        spec = f"openai:fake,base_url={fake.base_url},concurrency=4"
        first = _cli("nleye-triplet", spec, nleye, tmp_path / "a", cache)
        sent = len(fake.requests)
        assert sent == 12 and first["metrics"]["unparsed"] == 0  # the fake answers 1 or 2 to this prompt
        again = _cli("nleye-triplet", spec, nleye, tmp_path / "b", cache)
        # nothing but each run's probe ("ping", max_tokens=1: what the server says it serves)
        assert len(fake.requests) == sent and fake.pings == 2 and again["metrics"] == first["metrics"]
        uncached = _cli("nleye-triplet", spec, nleye, tmp_path / "c", cache, "--no-cache")
        assert len(fake.requests) == 2 * sent and fake.pings == 3  # --no-cache governs the response cache too
        assert uncached["metrics"] == first["metrics"]


def test_nleye_explanation_judged_by_a_served_model(nleye: Path, cache: dict[str, str], tmp_path: Path) -> None:
    with FakeOpenAIServer() as fake:
        results = _eval("nleye-explanation", "vlm:tiny,max_new_tokens=6", nleye, tmp_path / "o", cache,
                        judge=f"openai:judge,base_url={fake.base_url}")
        asked = [request_text(body) for body in fake.requests]
    records = _records(tmp_path / "o")
    assert len(asked) == 6 and all("[candidate explanation " in text for text in asked)
    verdicts = [r["judged"] for r in records]
    assert set(verdicts) <= {True, False} and results["metrics"]["judge_unparsed"] == 0
    assert results["metrics"]["judge_valid"] == pytest.approx(100.0 * sum(verdicts) / len(verdicts))
    judge = results["judge"]
    assert judge["judged"] == 6 and judge["parse_failures"] == 0 and judge["spec"].startswith("openai:judge")
    import hashlib
    assert judge["prompt_sha256"] == hashlib.sha256(JUDGE_PROMPT.encode()).hexdigest()


def test_a_killed_judged_run_resumes_without_asking_again(tmp_path: Path, cache: dict[str, str]) -> None:
    data = nleye_corpus(tmp_path / "data", samples=24, seed=1)
    out = tmp_path / "o"
    # 0.1 s a judgment: the first unit of 16 outlasts the store's 1 s flush, so it is on disk
    # while the second is still being asked (the scores are computed after the judging)
    with FakeOpenAIServer(latency=0.1) as fake:
        judge = f"openai:judge,base_url={fake.base_url},concurrency=1,cache=false"
        command = [sys.executable, "-m", "abduct", "eval", "nleye-explanation", "--model", "random", "--data",
                   str(data), "--out", str(out), "--quiet", "--no-cache", "--judge", judge]
        child = subprocess.Popen(command, env={**os.environ, **cache}, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not finished_judgments(out) and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait()
        finished = finished_judgments(out)
        assert finished and len(finished) < 24, "the run must be killed between two judged units"
        before = len(fake.requests)
        resumed = abduct(*command[3:], env=cache)
        assert resumed.returncode == 0, resumed.stderr
        after = [request_text(body) for body in fake.requests[before:]]
    samples = {s.sample_id: s for s in load_samples(data, "test")}
    values = {r["id"]: {"question": bem_question(samples[r["id"]]), "candidate": r["prediction"],
                        "references": f"1. {r['references'][0]}"} for r in _records(out)}
    asked = {sid: tidy(JUDGE_PROMPT.format_map({**v, "boundary": boundary(v)})) for sid, v in values.items()}
    assert set(after) == {text for sid, text in asked.items() if sid not in finished}
    assert len(after) == 24 - len(finished)  # each unfinished judgment asked once, no finished one again
    results = json.loads((out / "results.json").read_text())
    assert results["resumed"] is True and results["judge"]["judged"] == 24


def test_a_video_is_shown_as_sampled_frames(tmp_path: Path, cache: dict[str, str]) -> None:
    video = pytest.importorskip("abduct_video")
    import numpy as np

    from abduct import Decoding, GenerationRequest, Settings, VisualInput
    from abduct.host import load_model

    frames = np.zeros((12, 32, 32, 3), dtype=np.uint8)
    frames[:, :, :, 0] = np.arange(12, dtype=np.uint8)[:, None, None] * 20  # red grows frame by frame
    path = video.write_video(tmp_path / "clip.mp4", frames, fps=4.0)
    os.environ.update(cache)
    model = load_model("vlm:tiny", Settings(), build_registry()).model
    assert "video" in model.accepts
    # what it records of its inputs (results.json's model.inputs): no video decoded, nothing said of one
    assert model.describe_inputs() == {"image": {
        "processor": "CLIPImageProcessor", "do_resize": True, "size": {"shortest_edge": 28},
        "crop_size": {"height": 28, "width": 28}, "do_center_crop": True, "resample": "bicubic", "max_images": None}}
    clip = VisualInput.video(str(path), ((0.0, 2.0),))
    shown = model.images(clip)
    said = model.describe_inputs()["video"]
    assert said == {"frames_per_clip": 8, "sampling": "uniform", "frame_size": "as decoded",
                    "decode_backend": said["decode_backend"]} and said["decode_backend"] in ("decord", "pyav")
    assert len(shown) == 8 and shown[0].getpixel((16, 16))[0] < shown[-1].getpixel((16, 16))[0]
    text = model.generate([GenerationRequest(clip, "What happens?")], Decoding(max_new_tokens=3), None)
    assert len(text) == 1


def test_failed_requests_leave_no_results_and_a_more_patient_rerun_resumes(nleye: Path, tmp_path: Path,
                                                                          cache: dict[str, str]) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(faults=["truncated", "not_http"]) as fake:  # the first request: both of its tries
        spec = f"openai:fake,base_url={fake.base_url},concurrency=1,retries=1,backoff=0.01,cache_dir={tmp_path / 'c'}"
        failed = abduct("eval", "nleye-triplet", "--model", spec, "--data", str(nleye), "--out", str(out), "--quiet",
                        env=cache)
        assert failed.returncode == 2 and failed.stderr.count("\n") == 1, failed.stderr
        assert "1 of 12 requests failed" in failed.stderr and not (out / "results.json").exists()
        sent = len(fake.requests)
        patient = abduct("eval", "nleye-triplet", "--model", spec.replace("retries=1", "retries=10"), "--data",
                         str(nleye), "--out", str(out), "--quiet", env=cache)
        assert patient.returncode == 0, patient.stderr
        assert len(fake.requests) == sent + 1 and (out / "results.json").exists()


def test_a_rerun_against_a_mirror_resumes_and_an_oversized_reply_is_one_line(nleye: Path, tmp_path: Path,
                                                                              cache: dict[str, str]) -> None:
    out, cached = tmp_path / "run", tmp_path / "c"
    with FakeOpenAIServer(faults=["oversized_stream"]) as primary:  # the first request: a body over the cap
        spec = f"openai:fake,base_url={primary.base_url},concurrency=1,cache_dir={cached}"
        failed = abduct("eval", "nleye-triplet", "--model", spec, "--data", str(nleye), "--out", str(out), "--quiet",
                        env=cache)
        assert failed.returncode == 2 and failed.stderr.count("\n") == 1, failed.stderr
        assert "64 MiB cap; refused" in failed.stderr and not (out / "results.json").exists()
    with FakeOpenAIServer() as mirror:  # the base URL is gone: the same model through a mirror
        resumed = abduct("eval", "nleye-triplet", "--model", f"{spec},mirrors={mirror.base_url}", "--data",
                         str(nleye), "--out", str(out), "--quiet", env=cache)
        assert resumed.returncode == 0, resumed.stderr
        assert len(mirror.requests) == 1 and (out / "results.json").exists()
