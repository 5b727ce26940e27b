"""The parity check of a served setup (#46 item 7): the same weights run locally (``vlm:tiny``)
and behind an OpenAI-compatible server (the fake server answering with those weights,
``abduct_vlm.testing.model_reply``); ``abduct compare`` reports the paired difference and the share
of identical answers, and names the answers that differ when the server serves something else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abduct import Settings
from abduct.host import build_registry
from abduct_nleye.synth import synthesize as nleye_corpus
from abduct_vlm.testing import FakeOpenAIServer, model_reply
from conftest import abduct


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("parity")
    data = nleye_corpus(root / "data", samples=8, seed=0)
    common = ("--data", str(data), "--quiet", "--no-cache", "--limit", "6")
    short = ",max_new_tokens=8"  # a short answer each: the tiny model is slow to say nothing
    out = {name: root / name for name in ("local", "served", "other")}
    assert abduct("eval", "nleye-explanation", "--model", f"vlm:tiny{short}", "--out", str(out["local"]), "--label", "local",
                  *common).returncode == 0
    weights = build_registry().create("model", "vlm:tiny", Settings())
    with FakeOpenAIServer(reply=model_reply(weights), model_id="tiny") as same, FakeOpenAIServer() as other:
        for name, server in (("served", same), ("other", other)):
            run = abduct("eval", "nleye-explanation", "--model", f"openai:tiny,base_url={server.base_url}{short}", "--out",
                         str(out[name]), "--label", name, *common)
            assert run.returncode == 0, run.stderr
    return out


def _compare(*dirs: Path) -> tuple[dict[str, Any], str]:
    as_json = abduct("compare", *map(str, dirs), "--json", "--ci-resamples", "200")
    text = abduct("compare", *map(str, dirs), "--ci-resamples", "200")
    assert as_json.returncode == text.returncode == 0, as_json.stderr + text.stderr
    return json.loads(as_json.stdout), text.stdout


def test_the_same_weights_served_answer_identically_and_differ_by_nothing(runs: dict[str, Path]) -> None:
    found, text = _compare(runs["local"], runs["served"])
    served = found["runs"][1]
    assert served["same_answers"] == {"same": 6, "both": 6, "share": 100.0, "differ": []}
    tests = served["versus"]["metrics"]
    assert tests and all(t["difference"] == 0 for t in tests.values()), tests  # the paired difference: none
    assert "served: 6 of 6 answers identical to local's (100.0%)" in text


def test_a_server_serving_something_else_is_seen(runs: dict[str, Path]) -> None:
    found, text = _compare(runs["local"], runs["other"])
    other = found["runs"][1]["same_answers"]
    assert other["same"] == 0 and other["both"] == 6 and other["differ"] == ["s0000", "s0001", "s0002", "s0003",
                                                                             "s0004"]
    assert "other: 0 of 6 answers identical to local's (0.0%); first differing: s0000, s0001" in text
