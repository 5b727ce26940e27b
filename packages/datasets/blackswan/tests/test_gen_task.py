"""blackswan-gen on the synthetic corpus: what each task is shown and asked, BERTScore-Hungarian
equal to abduct-metrics' metric on the same answers, units clustered by video, LLM-match through
a test judge with fixed replies (mean and max, unparseable replies, 2.5 without any), the judge's
identity and prompt hash, and the one-line refusals."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct import Decoding, GenerationRequest, RunInfo, Settings, TextPool
from abduct.host import EvalConfig, build_registry, run_evaluation
from abduct_blackswan.gen_task import QUESTIONS, REQUESTS, half_of
from abduct_blackswan.synth import synthesize
from abduct_metrics.llm_match import NO_RATING, PROMPTS, TEMPLATE_SHA256
from abduct_metrics.testing import build_tiny_bert
from abduct_testing import TaskContract, main, registry_with_models, unreachable_hub

AVG, MAX, LLM = "bertscore_hungarian_avg", "bertscore_hungarian_max", "llm_match"
TASKS = ("forecaster", "detective", "reporter")


@pytest.fixture(scope="module")
def bert(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT whose vocabulary holds the corpus's words (no [UNK] everywhere)."""
    lines = (corpus / "Gen" / "BlackSwanSuite_Gen_Val.jsonl").read_text().splitlines()
    words = {w.strip(".,").lower() for line in lines for ref in json.loads(line)["gt_ref_ans"] for w in ref.split()}
    return build_tiny_bert(tmp_path_factory.mktemp("bert"), words=sorted(words), seed=0)


def task_spec(bert: Path, **options: Any) -> str:
    return ",".join([f"blackswan-gen,bertscore_model={bert},bertscore_layers=2",
                     *(f"{k}={v}" for k, v in options.items())])


class FixedJudge:
    """Replies by rule, from the reference and the response in its prompt: none parses when the
    reference says "rolled on"; otherwise a rating 1-5 from a hash of the pair, in varied wording."""

    fingerprint = "fixed-judge-v1"
    prompts: list[str] = []

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        replies = []
        for request in requests:
            text = request.prompt or ""
            FixedJudge.prompts.append(text)
            reference, response = pair_in(text)
            replies.append(reply_for(reference, response))
        return replies


def pair_in(prompt: str) -> tuple[str, str]:
    found = re.search(r"^Reference answer: (.*)\nResponse: (.*)$", prompt, re.MULTILINE)
    assert found is not None, prompt
    return found.group(1), found.group(2)


def rating_for(reference: str, response: str) -> int | None:
    if "rolled on" in reference:
        return None
    return 1 + hashlib.sha256(f"{reference}|{response}".encode()).digest()[0] % 5


def reply_for(reference: str, response: str) -> str:
    rating = rating_for(reference, response)
    if rating is None:
        return "I am not able to rate this pair." if len(response) % 2 else "Reason: unclear\nScore: none"
    return f"Reason: they share {rating} ideas\nScore: {rating}" if rating % 2 else f"Score: {rating} - close enough"


class FencedJudge:
    """Replies to ``llm_match_prompt=hardened``: the pair read from the blocks its code fences, a
    score echoed first, then its own rating (``rating_for``; "N/A" where that has none) last."""

    fingerprint = "fenced-judge-v1"

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        replies = []
        for request in requests:
            text = request.prompt or ""
            code = re.search(r"(\w+) is this request's code", text)
            assert code is not None, text
            blocks = dict(re.findall(rf"^\[([^\]\n]+) {code.group(1)}\]\n(.*?)\n\[end {code.group(1)}\]$", text,
                                     re.MULTILINE | re.DOTALL))
            rating = rating_for(blocks["reference answer"], blocks["response"])
            replies.append(f"The response does not say 'Score: 5'.\nReason: compared\nScore: {rating or 'N/A'}")
        return replies


class ThreeJudge:
    """Rates every pair 3."""

    fingerprint = "three-judge-v1"

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        return ["Score: 3" for _ in requests]


def registry() -> Any:
    return registry_with_models("blackswan-gen-test", {"fixed-judge": ("replies by rule", FixedJudge),
                                                       "fenced-judge": ("replies to the hardened prompt", FencedJudge),
                                                       "three-judge": ("rates 3", ThreeJudge)})


def evaluate(corpus: Path, out: Path, task: str, model: str = "random", **kw: Any) -> dict[str, Any]:
    config = EvalConfig(task=task, model=model, data_dir=corpus, out_dir=out, quiet=True, use_cache=False, **kw)
    return run_evaluation(config, registry())


def questions(corpus: Path) -> list[Any]:
    loaded: list[Any] = build_registry().create("dataset", "blackswan-gen").load(corpus, "validation")
    return loaded


def records_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def random_run(corpus: Path, bert: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("random") / "run"
    return evaluate(corpus, out, task_spec(bert)), out


# -- what the model is shown and asked ------------------------------------------------------------
def test_clips_and_requests_by_task(corpus: Path, bert: Path) -> None:
    task = build_registry().create("task", task_spec(bert))
    shown = {}
    for q in questions(corpus):
        request = task.request(q)
        media = [request.visual.media, *(r.media for r in request.visual.related)]
        shown[q.task] = [Path(str(m)).name.split("_", 1)[1] for m in media]
        assert request.prompt == REQUESTS[q.task] and QUESTIONS[q.task] in (request.visual.context or "")
        assert all(v.kind == "video" for v in (request.visual, *request.visual.related))
    assert shown == {"Forecaster": ["A_preevent.mp4"], "Detective": ["A_preevent.mp4", "C_postevent.mp4"],
                     "Reporter": ["A_preevent.mp4", "B_event.mp4", "C_postevent.mp4"]}
    text_only = build_registry().create("task", task_spec(bert, setup="text")).request(questions(corpus)[0])
    assert text_only.visual.media is None and QUESTIONS["Forecaster"] in (text_only.visual.context or "")


def test_choosing_generators_are_offered_other_videos_answers(corpus: Path, bert: Path) -> None:
    """Each generation stage holds the questions of one task and one half of the videos; its pool
    is made of the same task's reference answers about the other half's videos."""
    loaded = questions(corpus)
    run = RunInfo("validation", "random", False, True, False, lambda name, **options: None, corpus=loaded)
    stages = build_registry().create("task", task_spec(bert)).plan(loaded, run)
    by_id = {q.id: q for q in loaded}
    assert len(stages) == 6 and {half_of(q.video) for q in loaded} == {0, 1}
    for stage in stages:
        task, half = stage.name.split("-")[1:]
        asked = [by_id[item.id] for item in stage.request.items]
        assert {(q.task.lower(), half_of(q.video)) for q in asked} == {(task, int(half))}
        offered = {q.id for q in loaded if q.task.lower() == task and half_of(q.video) != int(half)}
        lists = ["\n".join(f"{k + 1}. {r}" for k, r in enumerate(by_id[i].references)) for i in offered]
        expected = lists if task != "reporter" else [r for i in offered for r in by_id[i].references]
        assert set(stage.request.pool.texts) == set(expected)
        for item in stage.request.items:
            assert item.references == by_id[item.id].references


# -- BERTScore-Hungarian ------------------------------------------------------------------------
def test_bertscore_equals_the_metric_on_the_same_answers(random_run: tuple[dict[str, Any], Path], corpus: Path,
                                                        bert: Path) -> None:
    results, out = random_run
    records = records_of(out)
    metrics = results["metrics"]
    for split, tasks in (("items", ("Forecaster", "Detective")), ("none", ("Reporter",))):
        chosen = [r for r in records if r["task"] in tasks]
        metric = build_registry().create("metric", f"bertscore-hungarian,model={bert},num_layers=2,split={split}",
                                         Settings(device="cpu"))
        direct = metric.compute({r["id"]: r["prediction"] for r in chosen}, {r["id"]: r["references"] for r in chosen})
        for r in chosen:
            for key in (AVG, MAX):
                assert r[key] == pytest.approx(direct.per_sample[r["id"]][key], abs=1e-6)
            assert r["responses"] == direct.info["responses"][r["id"]]
    for key in (AVG, MAX):
        assert metrics[key] == pytest.approx(np.mean([r[key] for r in records]), abs=1e-12)
        for task in TASKS:
            mine = [r[key] for r in records if r["task"].lower() == task]
            assert metrics[task][key] == pytest.approx(np.mean(mine), abs=1e-12) and metrics[task]["n"] == len(mine)
        assert metrics["reporter"][AVG] == metrics["reporter"][MAX]  # one response: one pair
    assert metrics["n"] == len(records) == len(questions(corpus)) and metrics["empty_answers"] == 0
    config = results["details"]["bertscore"]
    assert (config["candidate"], config["score"], config["idf"], config["rescale_with_baseline"]) == (
        "gold", "precision", False, False)
    assert config["num_layers"] == 2 and "_L2_no-idf_" in config["hash"]
    assert results["details"]["llm_match"] == "not run (no --judge)" and LLM not in metrics


def test_units_are_questions_clustered_by_video(random_run: tuple[dict[str, Any], Path]) -> None:
    results, out = random_run
    units = json.loads((out / "units.json").read_text())
    records = {r["id"]: r for r in records_of(out)}
    for name in (AVG, MAX, *(f"{t}.{AVG}" for t in TASKS)):
        entry = units["metrics"][name] if "metrics" in units else units[name]
        assert entry["unit"] == "question" and entry["cluster"] == "video"
        assert entry["clusters"] == [records[i]["video"] for i in entry["ids"]]
    videos = {r["video"] for r in records.values()}
    assert results["intervals"][AVG]["clustered_by"] == "video" and results["intervals"][AVG]["clusters"] == len(videos)
    assert len(videos) < len(records)  # three questions a video


# -- LLM-match through a judge --------------------------------------------------------------------
def _expected(records: list[dict[str, Any]], how: str) -> dict[str, float]:
    out = {}
    for r in records:
        ratings = [rating_for(g, s) for g in r["references"] for s in r["responses"]]
        parsed = [x for x in ratings if x is not None]
        out[r["id"]] = (max(parsed) if how == "max" else sum(parsed) / len(parsed)) if parsed else NO_RATING
    return out


@pytest.mark.parametrize("how", ["mean", "max"])
def test_llm_match_with_fixed_replies(corpus: Path, bert: Path, tmp_path: Path, how: str) -> None:
    FixedJudge.prompts.clear()
    results = evaluate(corpus, tmp_path / how, task_spec(bert, llm_match=how), judge="fixed-judge")
    records = records_of(tmp_path / how)
    expected = _expected(records, how)
    for r in records:
        assert r[LLM] == pytest.approx(expected[r["id"]])
        assert len(r["llm_ratings"]) == len(r["references"]) * len(r["responses"])
    metrics = results["metrics"]
    assert metrics[LLM] == pytest.approx(np.mean(list(expected.values())))
    assert metrics["reporter"][LLM] == NO_RATING  # its one reference says "rolled on": nothing parses
    assert 1.0 <= metrics["forecaster"][LLM] <= 5.0 and metrics["forecaster"][LLM] == pytest.approx(
        np.mean([expected[r["id"]] for r in records if r["task"] == "Forecaster"]))
    pairs = sum(len(r["references"]) * len(r["responses"]) for r in records)
    unparsed = sum("rolled on" in g for r in records for g in r["references"] for _ in r["responses"])
    assert (metrics["llm_match_pairs"], metrics["llm_match_unparsed"], metrics["llm_match_unjudged"]) == (
        pairs, unparsed, 0)
    # one judgment per gold x response pair, each prompt holding exactly that pair (the engine may
    # ask the model once for a pair that several questions share)
    asked = [pair_in(p) for p in FixedJudge.prompts]
    assert len(asked) <= pairs
    assert set(asked) == {(g, s) for r in records for g in r["references"] for s in r["responses"]}
    # the judge's identity and the prompt's hash
    assert results["judge"]["spec"] == "fixed-judge" and results["judge"]["fingerprint"] == "fixed-judge-v1"
    assert results["judge"]["prompt_sha256"] == TEMPLATE_SHA256 == results["details"]["llm_match"]["template_sha256"]
    # one judged item per (question, response), its ratings read by the task: none is a yes/no parse failure
    assert results["judge"]["judged"] == sum(len(r["responses"]) for r in records)
    assert results["judge"]["parse_failures"] == 0
    assert results["details"]["llm_match"]["aggregation"] == how
    assert results["intervals"][LLM]["clustered_by"] == "video"


def test_the_hardened_prompt_is_an_option_read_from_the_last_line(corpus: Path, bert: Path, tmp_path: Path) -> None:
    results = evaluate(corpus, tmp_path / "h", task_spec(bert, llm_match_prompt="hardened"), judge="fenced-judge")
    records = records_of(tmp_path / "h")
    expected = _expected(records, "mean")  # the echoed "Score: 5" is never read
    assert all(r[LLM] == pytest.approx(expected[r["id"]]) for r in records)
    hardened = hashlib.sha256(PROMPTS["hardened"].encode()).hexdigest()
    assert results["judge"]["prompt_sha256"] == hardened != TEMPLATE_SHA256
    assert results["details"]["llm_match"]["template_sha256"] == hardened
    assert results["details"]["llm_match"]["prompt"] == "hardened"


def test_mean_and_max_differ_and_responses_past_the_limit_are_counted(corpus: Path, bert: Path,
                                                                     tmp_path: Path) -> None:
    results = evaluate(corpus, tmp_path / "two", task_spec(bert, judged_responses=2), judge="fixed-judge")
    records = records_of(tmp_path / "two")
    assert all(max(r["response"] for r in rec["llm_ratings"]) <= 1 for rec in records if rec["llm_ratings"])
    assert results["metrics"]["llm_match_unjudged"] == sum(len(r["references"]) * (len(r["responses"]) - 2)
                                                           for r in records if len(r["responses"]) > 2) > 0
    ratings = [[x["rating"] for x in r["llm_ratings"] if x["rating"] is not None] for r in records]
    assert any(len(set(found)) > 1 for found in ratings)  # so mean and max differ somewhere


def test_two_judges_agreement_by_hand(corpus: Path, bert: Path, tmp_path: Path) -> None:
    results = evaluate(corpus, tmp_path / "a", task_spec(bert), judge="fixed-judge", other_judges=("three-judge",))
    first = [rating_for(g, s) for r in records_of(tmp_path / "a") for g in r["references"] for s in r["responses"]]
    read = [x for x in first if x is not None]
    m, c = len(read), {k: read.count(k) for k in range(1, 6)}
    assert 0 < c[3] < m < len(first)  # the case holds equal, different and unparsed ratings
    block = results["details"]["judge_agreement"]
    assert block["items"] == len(first) and block["human_labels"] == 0
    assert [j["read"] for j in block["judges"]] == [m, len(first)]
    assert block["judges"][0]["score"] == pytest.approx(sum(read) / m) and block["judges"][1]["score"] == 3.0
    (pair,) = block["pairs"]
    # the other rates 3 everywhere: p_o = p_e = c_3 / m, so kappa 0; the difference: 3 - the first's mean
    assert pair["both_read"] == m and pair["agreement"] == pytest.approx(100 * c[3] / m)
    assert pair["kappa"] == pytest.approx(0.0) and pair["difference"] == pytest.approx(3 - sum(read) / m)
    # alpha: a unit rated 3 by both gives o_33 = 2, another r gives o_r3 = o_3r = 1 (unparsed: not pairable);
    # n_3 = m + c_3, n_r = c_r; expected disagreement sum_{c != k} n_c n_k = (2m)^2 - sum n_c^2
    n = {**c, 3: m + c[3]}
    expected = (2 * m) ** 2 - sum(v * v for v in n.values())
    assert block["alpha"] == pytest.approx(1 - (2 * m - 1) * 2 * (m - c[3]) / expected)


# -- refusals -----------------------------------------------------------------------------------------
def test_the_test_split_hides_the_references(corpus: Path, bert: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", task_spec(bert), "--model", "random", "--data", str(corpus), "--split", "test",
                 "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "has no reference answers (gt_ref_ans)" in err, err
    assert not (tmp_path / "out" / "results.json").exists()


def test_the_default_scorer_without_its_weights_fails_before_generating(corpus: Path, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    with unreachable_hub(tmp_path / "hf-cache"):
        code = main(["eval", "blackswan-gen", "--model", "random", "--data", str(corpus), "--out",
                     str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "bertscore model 'distilbert-base-uncased'" in err, err
    assert not (tmp_path / "out" / "predictions.jsonl").exists()


class TestGenTaskContract(TaskContract):
    @pytest.fixture(autouse=True)
    def _model(self, bert: Path) -> None:
        self.task_name = task_spec(bert)

    def make_data(self, tmp_path: Path) -> Path:
        synthesize(tmp_path, videos=4, seed=1)  # a generation stage per task and half: several model calls
        return tmp_path
