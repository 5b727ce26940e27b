"""The token ledger and ``--budget`` against the fake OpenAI server, whose answers carry a
deterministic ``usage`` (words): results.json's ``tokens`` equals what the server counted, per
stage and for the judge apart; shards add up to the one-process run; a budget stops exactly
where its rule says, exit 3, and a rerun with a larger budget ends as an uninterrupted run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abduct_nleye.synth import synthesize as nleye_corpus
from abduct_vlm.testing import FakeOpenAIServer, default_reply, token_usage
from conftest import abduct

BATCH = 4  # requests an engine sends at once; the budget is checked before each batch


@pytest.fixture(scope="module")
def nleye(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nleye_corpus(tmp_path_factory.mktemp("nleye") / "data", samples=48, seed=0)  # 3 units of 32 requests


def _eval(task: str, model: str, data: Path, out: Path, cache: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    run = abduct("eval", task, "--model", model, "--data", str(data), "--out", str(out), "--quiet", "--json",
                 "--batch-size", str(BATCH), *extra, env={"ABDUCT_CACHE_DIR": str(cache)})
    return run.returncode, (json.loads(run.stdout) if run.returncode == 0 else {}), run.stderr


def _served(fake: FakeOpenAIServer, name: str = "fake") -> str:
    return f"openai:{name},base_url={fake.base_url},concurrency={BATCH}"


def _cost(body: dict[str, Any]) -> int:
    usage = token_usage(body, {"content": default_reply(body)})
    return int(usage["prompt_tokens"] + usage["completion_tokens"])


def test_the_ledger_is_what_the_server_counted_and_cached_answers_cost_nothing(nleye: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as fake:
        code, first, err = _eval("nleye-triplet", _served(fake), nleye, tmp_path / "a", tmp_path / "cache")
        assert code == 0, err
        tokens = first["tokens"]
        assert tokens["stages"] == {"triplet": tokens["total"]} and "judge" not in tokens
        assert tokens["total"] == {"requests": fake.served, "cached": 0, "prompt": fake.tokens["prompt"],
                                   "completion": fake.tokens["completion"], "reasoning": 0}
        assert fake.served == 96 and fake.tokens["prompt"] > 0
        # the probe's one request is recorded apart from the ledger, as the server counted it
        assert first["model"]["inputs"]["served"]["probe"] == {"requests": 1, **fake.ping_tokens} and fake.pings == 1
        code, again, err = _eval("nleye-triplet", _served(fake), nleye, tmp_path / "b", tmp_path / "cache")
        assert code == 0, err
        assert fake.served == 96 and fake.pings == 2  # all from the cache; the rerun's probe only
        assert again["tokens"]["total"] == {"requests": 0, "cached": 96, "prompt": 0, "completion": 0, "reasoning": 0}


def test_the_judge_is_counted_apart(nleye: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as fake:
        code, results, err = _eval("nleye-explanation", "random", nleye, tmp_path / "o", tmp_path / "cache",
                                   "--judge", _served(fake, "judge"), "--limit", "8")
    assert code == 0, err
    tokens = results["tokens"]
    assert tokens["judge"] == {"requests": fake.served, "cached": 0, "prompt": fake.tokens["prompt"],
                               "completion": fake.tokens["completion"], "reasoning": 0}
    assert fake.served == 8
    assert all(stage["prompt"] == stage["completion"] == 0 for stage in tokens["stages"].values())  # random: none
    assert tokens["total"]["prompt"] == fake.tokens["prompt"]


def test_merged_shards_add_up_to_the_one_process_ledger(nleye: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as fake:
        model = _served(fake) + ",cache=false"
        code, whole, err = _eval("nleye-triplet", model, nleye, tmp_path / "whole", tmp_path / "c0", "--no-cache")
        assert code == 0, err
        for index in range(2):
            code, _, err = _eval("nleye-triplet", model, nleye, tmp_path / f"s{index}", tmp_path / "c1", "--no-cache",
                                 "--shard", f"{index}/2")
            assert code == 0, err
    merged = abduct("merge", str(tmp_path / "merged"), str(tmp_path / "s0"), str(tmp_path / "s1"), "--quiet")
    assert merged.returncode == 0, merged.stderr
    assert json.loads((tmp_path / "merged" / "results.json").read_text())["tokens"] == whole["tokens"]
    total = whole["tokens"]["total"]
    assert total["requests"] == 96 and fake.served == 192
    spent = total["prompt"] + total["completion"]
    assert f"  tokens: {spent:,} (prompt {total['prompt']:,}, completion {total['completion']:,}) in 96 requests, " \
        "0 cached\n" in merged.stdout  # the summary's line


def test_a_budget_stops_before_the_batch_that_would_pass_it_and_a_larger_one_resumes(nleye: Path,
                                                                                    tmp_path: Path) -> None:
    with FakeOpenAIServer() as fake:
        code, whole, err = _eval("nleye-triplet", _served(fake), nleye, tmp_path / "whole", tmp_path / "c0")
        assert code == 0, err
        total = whole["tokens"]["total"]["prompt"] + whole["tokens"]["total"]["completion"]
        budget = total // 2
        before = len(fake.requests)
        code, _, err = _eval("nleye-triplet", _served(fake), nleye, tmp_path / "run", tmp_path / "c1",
                             "--budget", f"tokens={budget}")
        sent = fake.requests[before:]
        # the rule: a batch is sent while what was spent is under the budget, so the run stops after
        # the first batch that reached it (batches are sent one after another, BATCH requests each)
        spent = [sum(_cost(body) for body in sent[: i + BATCH]) for i in range(0, len(sent), BATCH)]
        assert spent[-1] >= budget > spent[-2] and len(sent) % BATCH == 0
        assert code == 3 and err.count("\n") == 1, err
        assert f"budget spent: {spent[-1]:,} of {budget:,} tokens" in err
        assert "kept in" in err and "with a larger --budget (or none) resumes" in err
        assert not (tmp_path / "run" / "results.json").exists()
        code, resumed, err = _eval("nleye-triplet", _served(fake), nleye, tmp_path / "run", tmp_path / "c1",
                                   "--budget", f"tokens={total}")
        assert code == 0, err
        assert len(fake.requests) == before + 96  # nothing asked twice: the stopped run's answers were kept
    assert resumed["metrics"] == whole["metrics"] and resumed["resumed"] is True
    # the ledger adds up over the invocations (kept in .partial/tokens.json): the run's whole cost
    assert resumed["tokens"]["total"]["prompt"] + resumed["tokens"]["total"]["completion"] == total
    assert resumed["tokens"]["total"]["requests"] == 96


def test_a_cost_budget_stops_as_a_token_budget_at_the_models_prices(nleye: Path, tmp_path: Path) -> None:
    """At 2 per million prompt tokens and 4 per million completion tokens, a run costs what the
    server counted at those prices; a budget of half that stops as ``tokens=`` does and resumes."""
    priced = ",price_in=2,price_out=4"
    with FakeOpenAIServer() as fake:
        code, whole, err = _eval("nleye-triplet", _served(fake) + priced, nleye, tmp_path / "whole", tmp_path / "c0")
        assert code == 0, err
        cost = (2 * fake.tokens["prompt"] + 4 * fake.tokens["completion"]) / 1e6
        assert whole["tokens"]["cost"] == pytest.approx(cost)
        before = len(fake.requests)
        code, _, err = _eval("nleye-triplet", _served(fake) + priced, nleye, tmp_path / "run", tmp_path / "c1",
                             "--budget", f"cost={cost / 2}")
        sent = fake.requests[before:]
        costs = [sum(_cost2(body) for body in sent[: i + BATCH]) / 1e6 for i in range(0, len(sent), BATCH)]
        assert code == 3 and costs[-1] >= cost / 2 > costs[-2], err
        assert f"budget spent: {costs[-1]:.6g} of {cost / 2:g} at the given prices" in err
        code, resumed, err = _eval("nleye-triplet", _served(fake) + priced, nleye, tmp_path / "run", tmp_path / "c1",
                                   "--budget", f"tokens=10000000,cost={cost * 2}")
        assert code == 0, err
    assert resumed["metrics"] == whole["metrics"] and resumed["tokens"]["cost"] == pytest.approx(cost)


def _cost2(body: dict[str, Any]) -> int:
    usage = token_usage(body, {"content": default_reply(body)})
    return int(2 * usage["prompt_tokens"] + 4 * usage["completion_tokens"])


def test_a_cost_budget_needs_every_models_prices(nleye: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as fake:
        code, _, err = _eval("nleye-triplet", _served(fake), nleye, tmp_path / "o", tmp_path / "c", "--budget", "cost=1")
    assert code == 2 and err.count("\n") == 1 and "give model 'openai' (plugin 'vlm') price_in= and price_out=" in err, err
    assert fake.requests == []


@pytest.mark.parametrize("value", ["tokens=0", "tokens=x", "cost=0", "cost=x", "cost=nan", "1000"])
def test_a_bad_budget_is_one_line(value: str, nleye: Path, tmp_path: Path) -> None:
    run = abduct("eval", "nleye-triplet", "--model", "random", "--data", str(nleye), "--out", str(tmp_path / "o"),
                 "--budget", value)
    assert run.returncode == 2 and "--budget" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize(("prices", "says"), [(",price_in=1", "price_in= needs price_out= too"),
                                              (",price_in=1,price_out=-2", "price_out=-2 is not a price")])
def test_a_bad_price_is_one_line(prices: str, says: str, nleye: Path, tmp_path: Path) -> None:
    run = abduct("eval", "nleye-triplet", "--model", f"random{prices}", "--data", str(nleye), "--out",
                 str(tmp_path / "o"))
    assert run.returncode == 2 and says in run.stderr and run.stderr.count("\n") == 1, run.stderr
