"""abduct-blackswan with the model packages (every package installed): the tiny VLM reading the
clips, generating and scoring; a served model behind the fake OpenAI-compatible server, which
takes no video (refused in one line) and answers the text-only setup; and the lmms-eval export,
whose documents, answered as a model answers the same prompts (and, in the video setup, the same
clip files), score what `abduct eval` scores, through the export's hooks and through lmms-eval."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from abduct_blackswan.synth import synthesize
from abduct_var.synth import synthesize as synthesize_var
from abduct_vlm.testing import FakeOpenAIServer, request_text
from conftest import abduct

TASKS = ("blackswan-mcq", "blackswan-yn")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("blackswan") / "data"
    synthesize(data, videos=4, seed=3)
    return data


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One cache directory for this module's runs (the tiny VLM is built there once)."""
    return {"ABDUCT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}


def _eval(task: str, model: str, data: Path, out: Path, env: dict[str, str], *extra: str) -> dict[str, Any]:
    run = abduct("eval", task, "--model", model, "--data", str(data), "--out", str(out), "--quiet", "--json",
                 "--no-cache", *extra, env=env)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def test_the_tiny_vlm_reads_the_clips_generating_and_scoring(corpus: Path, cache: dict[str, str],
                                                             tmp_path: Path) -> None:
    asked = _eval("blackswan-mcq", "vlm:tiny,max_new_tokens=3", corpus, tmp_path / "g", cache, "--limit", "3")
    assert asked["details"]["answered_by"] == "generation" and asked["inputs"]["ignored"] == []
    records = _records(tmp_path / "g")
    assert asked["metrics"]["unparsed"] == sum(not r["parsed"] for r in records) and len(records) == 3
    assert all((r["answer"] == -1) == (not r["parsed"]) for r in records)  # an unreadable answer: -1, and wrong
    scored = _eval("blackswan-yn,answer=score", "vlm:tiny", corpus, tmp_path / "s", cache, "--limit", "3")
    assert scored["details"]["answered_by"] == "scores" and scored["metrics"]["unparsed"] == 0
    assert all(len(r["scores"]) == 2 for r in _records(tmp_path / "s"))


def _letter(text: str) -> str:
    """A deterministic answer to a prompt: a letter or yes/no, or (one time in five) nothing readable."""
    digest = hashlib.sha256(text.encode()).digest()[0]
    if digest % 5 == 0:
        return "I cannot tell."
    return ("Yes", "No")[digest % 2] if "yes or no" in text else f"Answer: ({'ABC'[digest % 3]})"


def test_a_served_model_takes_the_text_only_setup_and_is_refused_video(corpus: Path, cache: dict[str, str],
                                                                        tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=lambda body: _letter(request_text(body))) as fake:
        spec = f"openai:fake,base_url={fake.base_url}"
        refused = abduct("eval", "blackswan-mcq", "--model", spec, "--data", str(corpus), "--out", str(tmp_path / "v"),
                         "--quiet", env=cache)
        assert refused.returncode == 2 and "cannot take video" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1 and fake.requests == []
        for task in TASKS:
            results = _eval(f"{task},setup=text", spec, corpus, tmp_path / task, cache)
            records = _records(tmp_path / task)
            assert results["metrics"]["unparsed"] == sum(not r["parsed"] for r in records) > 0
            assert {r["output"] for r in records} <= {"Yes", "No", "I cannot tell.", "Answer: (A)", "Answer: (B)",
                                                     "Answer: (C)"}


def test_the_lmms_eval_export_scores_what_abduct_eval_scores(corpus: Path, cache: dict[str, str], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Each exported document answered by `_letter` of its text, through the export's own hooks
    (lmms-eval's process_results and aggregation), gives the metrics of `abduct eval` with a served
    model answering the same prompts with `_letter`: the documents ask exactly what abduct asks."""
    from abduct_lmms.hooks import aggregate, process_results

    for task in TASKS:
        export = abduct("export", "lmms-eval", f"{task},setup=text", "--data", str(corpus), "--out",
                        str(tmp_path / "tasks"), env=cache)
        assert export.returncode == 0, export.stderr
        folder = tmp_path / "tasks" / export.stdout.strip()
        assert json.loads((folder / "source.json").read_text())["kind"] == "generate_until"
        docs = [json.loads(line) for line in (folder / "docs.jsonl").read_text().splitlines()]
        with FakeOpenAIServer(reply=lambda body: _letter(request_text(body))) as fake:
            direct = _eval(f"{task},setup=text", f"openai:fake,base_url={fake.base_url}", corpus, tmp_path / task,
                           cache)["metrics"]
        items = [process_results(d, [_letter(d["text"])]) for d in docs]
        for metric in ("accuracy", "detective_accuracy", "reporter_accuracy", "unparsed", "n"):
            assert aggregate(folder / "source.json", [i[metric] for i in items], metric) == pytest.approx(
                direct[metric]), (task, metric)


def _clip_letter(paths: Sequence[str], text: str) -> str:
    """`_letter` of the prompt and the clips' file names: an answer that changes with the clips shown."""
    return _letter(text + "".join(f"|{Path(p).name}" for p in paths))


class _ClipReader:
    """Stands in for a video model: answers `_clip_letter` of the clip files it is shown (the
    input's, then its related inputs', in order) and of the prompt as abduct-vlm words it: what an
    lmms-eval video model gets from an exported document (`doc_to_visual`, `doc_to_text`)."""

    accepts = frozenset({"video", "context", "related"})
    fingerprint = "clip-reader"

    def __init__(self, answer: Any = _clip_letter) -> None:
        self.answer = answer

    def generate(self, requests: Sequence[Any], decoding: Any, pool: Any) -> list[str]:
        from abduct_vlm.prompts import Prompts, visual_parts

        return [self.answer([str(p.media) for p in visual_parts(r.visual) if p.media is not None],
                            Prompts().generation(r.visual, r.prompt)) for r in requests]


def _direct(task: str, model: str, data: Path, out: Path) -> dict[str, Any]:
    """`abduct eval TASK` with the stand-in video models (each answers from its clips and prompt)."""
    from abduct.host import EvalConfig, run_evaluation
    from abduct_testing import registry_with_models

    registry = registry_with_models("blackswan-video-stand-ins", {
        "clip-reader": ("answers from the clip files and the prompt", _ClipReader),
        "says-a": ("answers A to everything, as lmms-eval's dummy model does", lambda: _ClipReader(lambda p, t: "A")),
    })
    config = EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True, use_cache=False,
                        ci_resamples=0)
    return dict(run_evaluation(config, registry=registry)["metrics"])


def _export(task: str, data: Path, out: Path, env: dict[str, str]) -> Path:
    export = abduct("export", "lmms-eval", task, "--data", str(data), "--out", str(out), env=env)
    assert export.returncode == 0, export.stderr
    return out / export.stdout.strip()


CLIP_ROLES = {("preevent", "postevent"): "Detective", ("preevent", "event", "postevent"): "Reporter",
              ("merged",): "Reporter"}


def test_the_lmms_eval_video_export_scores_what_abduct_eval_scores(corpus: Path, cache: dict[str, str],
                                                                    tmp_path: Path) -> None:
    """The video setup (the default): each document names its whole clip files, by absolute path,
    in the order abduct shows them (Detective: pre- and post-event; Reporter: the whole video or
    the three clips), as lmms-eval's video tasks name theirs. Answered by `_clip_letter` of those
    paths and its text through the export's hooks, it gives the metrics of `abduct eval` with a
    model answering from the same clips and prompt. A video with time spans (VAR) is refused."""
    from abduct_lmms.docs import doc_to_text, doc_to_visual
    from abduct_lmms.hooks import aggregate, process_results

    for task in TASKS:
        folder = _export(task, corpus, tmp_path / "tasks", cache)
        docs = [json.loads(line) for line in (folder / "docs.jsonl").read_text().splitlines()]
        shown = [doc_to_visual(d) for d in docs]
        assert all(isinstance(p, str) and Path(p).is_absolute() and Path(p).is_file() for s in shown for p in s)
        roles = {tuple(re.sub(r"^\d+_[A-E]_", "", Path(p).stem) for p in s) for s in shown}
        assert roles <= set(CLIP_ROLES) and set(CLIP_ROLES[r] for r in roles) == {"Detective", "Reporter"}, roles
        answers = [_clip_letter(s, doc_to_text(d)) for s, d in zip(shown, docs)]
        direct = _direct(task, "clip-reader", corpus, tmp_path / task)
        assert direct["unparsed"] > 0 and len(set(answers)) > 2  # the answers differ, some unreadable
        items = [process_results(d, [a]) for d, a in zip(docs, answers)]
        for metric in ("accuracy", "detective_accuracy", "reporter_accuracy", "unparsed", "n"):
            assert aggregate(folder / "source.json", [i[metric] for i in items], metric) == pytest.approx(
                direct[metric]), (task, metric)
    synthesize_var(tmp_path / "var", 4, 0)
    refused = abduct("export", "lmms-eval", "var-premise", "--data", str(tmp_path / "var"), "--out",
                     str(tmp_path / "v"), env=cache)
    assert refused.returncode == 2 and "time spans" in refused.stderr and "var-premise" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "v").exists()


def test_lmms_eval_runs_the_exported_video_tasks(corpus: Path, cache: dict[str, str], tmp_path: Path) -> None:
    """lmms-eval's own CLI loads the exported video tasks, its `dummy` model opens every path
    `doc_to_visual` gives (read_bytes=1; a missing file fails the run) and answers A, and the
    metrics it prints are those of `abduct eval` with a model answering A."""
    tasks = tmp_path / "tasks"
    names = [_export(task, corpus, tasks, cache).name for task in TASKS]
    env = {**os.environ, **cache, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets")}
    done = subprocess.run([sys.executable, "-m", "lmms_eval", "--model", "dummy", "--model_args",
                           "read_bytes=1,response=A", "--tasks", ",".join(names), "--include_path", str(tasks),
                           "--batch_size", "1", "--output_path", str(tmp_path / "lmms-eval")],
                          env=env, capture_output=True, text=True)
    found = list((tmp_path / "lmms-eval").rglob("*_results.json"))  # lmms-eval exits 0 on a failed evaluation
    assert done.returncode == 0 and len(found) == 1, (done.stdout + done.stderr)[-3000:]
    theirs = json.loads(found[0].read_text())["results"]
    for task, name in zip(TASKS, names):
        ours = _direct(task, "says-a", corpus, tmp_path / task)
        numbers = {k: v for k, v in ours.items() if isinstance(v, int | float) and not isinstance(v, bool)}
        assert numbers and {k: theirs[name][f"{k},none"] for k in numbers} == pytest.approx(numbers), task



@pytest.fixture(scope="module")
def bert(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny local BERT standing in for distilbert, its vocabulary the Gen references' words."""
    from abduct_metrics.testing import build_tiny_bert

    lines = (corpus / "Gen" / "BlackSwanSuite_Gen_Val.jsonl").read_text().splitlines()
    words = {w.strip(".,").lower() for line in lines for ref in json.loads(line)["gt_ref_ans"] for w in ref.split()}
    return build_tiny_bert(tmp_path_factory.mktemp("bert"), words=sorted(words), seed=0)


def _gen(bert: Path, setup: str = "video") -> str:
    return f"blackswan-gen,setup={setup},bertscore_model={bert},bertscore_layers=2"


def test_a_served_model_answers_the_generative_questions(corpus: Path, cache: dict[str, str], bert: Path,
                                                         tmp_path: Path) -> None:
    """blackswan-gen through the fake server (text-only setup): three listed possibilities read as
    three responses for Forecaster and Detective, the whole answer as one for Reporter, each
    question scored by BERTScore-Hungarian."""
    listed = "1. A red ball rolls off the table.\n2. The cup falls over.\n3. Nothing happens at all."
    with FakeOpenAIServer(reply=lambda body: listed) as fake:
        results = _eval(_gen(bert, "text"), f"openai:fake,base_url={fake.base_url}", corpus, tmp_path / "gen", cache)
        assert fake.requests  # every question was asked of the served model
    records = _records(tmp_path / "gen")
    assert {r["task"] for r in records} == {"Forecaster", "Detective", "Reporter"}
    assert all(len(r["responses"]) == (1 if r["task"] == "Reporter" else 3) for r in records)
    metrics = results["metrics"]
    assert 0.0 < metrics["bertscore_hungarian_avg"] <= metrics["bertscore_hungarian_max"] <= 1.0
    assert metrics["n"] == len(records) and metrics["empty_answers"] == 0


def test_the_tiny_vlm_answers_the_generative_questions_on_the_clips(corpus: Path, cache: dict[str, str], bert: Path,
                                                                    tmp_path: Path) -> None:
    results = _eval(_gen(bert), "vlm:tiny,max_new_tokens=12", corpus, tmp_path / "vlm", cache, "--limit", "3")
    records = _records(tmp_path / "vlm")
    assert [r["task"] for r in records] == ["Forecaster", "Detective", "Reporter"]
    assert all(r["prediction"] and r["responses"] for r in records) and results["inputs"]["ignored"] == []
    assert all(-1.0 <= results["metrics"][t]["bertscore_hungarian_avg"] <= 1.0
               for t in ("forecaster", "detective", "reporter"))


def test_a_served_model_with_log_probabilities_chooses_by_likelihood(corpus: Path, cache: dict[str, str],
                                                                     tmp_path: Path) -> None:
    """A served model that returns log-probabilities scores each option (the log-probability of
    "yes" after a question about it) and the task takes the most likely one: no text is parsed."""
    template = 'answer_template="Is this the answer: {text}? yes or no"'
    with FakeOpenAIServer() as fake:
        spec = f"openai:fake,base_url={fake.base_url},logprobs=true,top_logprobs=2,{template}"
        results = _eval("blackswan-mcq,setup=text,answer=score", spec, corpus, tmp_path / "scored", cache)
        assert fake.requests and all(body["logprobs"] is True for body in fake.requests)
    records = _records(tmp_path / "scored")
    assert results["details"]["answered_by"] == "scores" and results["metrics"]["unparsed"] == 0
    assert all(len(r["scores"]) == 3 and r["answer"] == max(range(3), key=lambda k: (r["scores"][k], -k))
               for r in records)


def _reasoned(body: dict[str, Any], how: str) -> str | dict[str, Any]:
    """A reasoning model's reply whose reasoning names another answer than its final one: C
    inside the reasoning, B (or "yes") after it; ``how`` says where the reasoning goes."""
    final = "Yes" if "yes or no" in request_text(body).lower() else "B"
    thought = "The clips suggest... Answer: C. No, wait; yes or no? no."
    if how == "field":  # as vLLM's and SGLang's reasoning parsers return it
        return {"content": final, "reasoning_content": thought}
    if how == "unfinished":  # stopped at the token limit inside the block
        return {"content": f"<think>{thought} Answer: C", "finish_reason": "length"}
    if how == "unfinished_field":
        return {"content": None, "reasoning_content": thought, "finish_reason": "length"}
    return f"<think>{thought}</think>{final}"


@pytest.mark.parametrize("how", ["tag", "field"])
def test_the_official_parsers_never_see_the_reasoning(corpus: Path, cache: dict[str, str], tmp_path: Path,
                                                      how: str) -> None:
    """`<think>... Answer: C ...</think>B` and `reasoning_content` alike: MCQ reads B, YN yes; the
    reasoning is kept per sample in predictions.jsonl and folded in samples.html."""
    with FakeOpenAIServer(reply=lambda body: _reasoned(body, how)) as fake:
        for task, answer in (("blackswan-mcq", 1), ("blackswan-yn", "yes")):
            results = _eval(f"{task},setup=text", f"openai:fake,base_url={fake.base_url}", corpus, tmp_path / task,
                            cache)
            records = _records(tmp_path / task)
            assert results["metrics"]["unparsed"] == 0
            assert {r["answer"] for r in records} == {answer}, task
            assert all(r["reasoning"].startswith("The clips suggest") and "think>" not in r["output"] for r in records)
            page = (tmp_path / task / "samples.html").read_text()  # the views' JSON, drawn by its script
            assert '"reasoning":"The clips suggest' in page and 'el("details"' in page


@pytest.mark.parametrize("how", ["unfinished", "unfinished_field"])
def test_an_unfinished_reasoning_is_unparsed_with_its_reason(corpus: Path, cache: dict[str, str], tmp_path: Path,
                                                             how: str) -> None:
    with FakeOpenAIServer(reply=lambda body: _reasoned(body, how)) as fake:
        results = _eval("blackswan-mcq,setup=text", f"openai:fake,base_url={fake.base_url}", corpus, tmp_path / "r",
                        cache)
    records = _records(tmp_path / "r")
    assert results["metrics"]["unparsed"] == len(records) and {r["answer"] for r in records} == {-1}
    assert all(r["reasoning_finished"] is False and r["output"] == "" for r in records)
    assert results["metrics"]["unparsed_reasons"] == {"reasoning not finished": len(records)}
    assert {r["unparsed"] for r in records} == {"reasoning not finished"}
    assert '"flags":{"unparsed":true}' in (tmp_path / "r" / "samples.html").read_text()  # a filter of the page


def test_reasoning_none_and_a_bad_pattern(corpus: Path, cache: dict[str, str], tmp_path: Path) -> None:
    """reasoning=none parses the whole text (C, as before the split); a broken pattern is one line."""
    with FakeOpenAIServer(reply=lambda body: _reasoned(body, "tag")) as fake:
        spec = f"openai:fake,base_url={fake.base_url}"
        results = _eval("blackswan-mcq,setup=text", f"{spec},reasoning=none", corpus, tmp_path / "n", cache)
        assert {r["answer"] for r in _records(tmp_path / "n")} == {2} and "reasoning" not in _records(tmp_path / "n")[0]
        assert results["metrics"]["unparsed"] == 0
        bad = abduct("eval", "blackswan-mcq,setup=text", "--model", f"{spec},reasoning=(", "--data", str(corpus),
                     "--out", str(tmp_path / "b"), "--quiet", env=cache)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "reasoning='('" in bad.stderr
