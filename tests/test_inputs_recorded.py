"""What shaped a run's inputs, recorded (results.json's ``model.inputs``), ``--label``, and
``abduct compare`` flagging runs that are not like for like: a served model behind the fake
server (its reported model id and ``system_fingerprint``) and the tiny local VLM (its processor's
resize rule, a video's frames and decode backend: tests/test_vlm_benchmarks.py, beside the
video it decodes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abduct_nleye.synth import synthesize as nleye_corpus
from abduct_report.conditions import input_differences, unlike_notes
from abduct_vlm.testing import FakeOpenAIServer, default_reply
from conftest import abduct


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {"ABDUCT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}


@pytest.fixture(scope="module")
def nleye(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nleye_corpus(tmp_path_factory.mktemp("nleye") / "data", samples=4, seed=0)


def _eval(model: str, data: Path, out: Path, env: dict[str, str], *extra: str) -> dict[str, Any]:
    run = abduct("eval", "nleye-triplet", "--model", model, "--data", str(data), "--out", str(out), "--quiet",
                 "--json", "--batch-size", "4", *extra, env=env)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def test_served_facts_labels_and_compare_flags_what_differs(nleye: Path, env: dict[str, str], tmp_path: Path) -> None:
    with FakeOpenAIServer(model_id="fake-ckpt-1", system_fingerprint="fp_a") as fake:
        spec = f"openai:fake,base_url={fake.base_url},concurrency=3"
        first = _eval(spec, nleye, tmp_path / "a", env)
        second = _eval(f"{spec},max_images=3", nleye, tmp_path / "b", env, "--label", "three images at most")
    model = first["model"]
    assert model["label"] == "openai:fake,concurrency=3"  # the URL left out
    assert model["inputs"] == {
        "image": {"encoding": "png", "client_resize": "none", "max_images": None},
        "served": {"endpoints": 1, "mirrors": 0, "concurrency": 3, "model_id": "fake-ckpt-1",
                   "system_fingerprint": "fp_a", "grouping": {"by": "media", "groups": 8, "shared": 0},
                   "probe": {"requests": 1, "prompt": 1, "completion": 1}}}  # "ping" answered "pong"
    assert second["model"]["label"] == "three images at most"
    on_disk = json.loads((tmp_path / "b" / "results.json").read_text())
    assert on_disk["model"]["label"] == "three images at most" and on_disk["model"]["inputs"] == second["model"]["inputs"]
    assert "three images at most" in (tmp_path / "b" / "report.html").read_text()
    assert "- what shaped the inputs: image.encoding png; " in (tmp_path / "a" / "report.md").read_text()

    shown = abduct("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--no-published", "--ci-resamples", "0",
                   "--html", str(tmp_path / "compare.html"))
    assert shown.returncode == 0, shown.stderr
    assert "not like for like: openai:fake,concurrency=3 vs three images at most: image.max_images null vs 3" \
        in shown.stdout
    assert "127.0.0.1" not in shown.stdout and "http" not in shown.stdout.replace("--html", "")
    page = (tmp_path / "compare.html").read_text()
    assert "not like for like" in page and "three images at most" in page
    listed = abduct("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--no-published", "--ci-resamples", "0",
                    "--json")
    runs = json.loads(listed.stdout)["runs"]
    assert [r["not_like_for_like"] for r in runs] == [[], ["image.max_images null vs 3"]]
    assert [r["name"] for r in runs] == ["openai:fake,concurrency=3", "three images at most"]


def test_a_label_that_is_no_name_is_a_usage_error(nleye: Path, env: dict[str, str], tmp_path: Path) -> None:
    run = abduct("eval", "nleye-triplet", "--model", "random", "--data", str(nleye), "--out", str(tmp_path / "o"),
                 "--label", "  ", env=env)
    assert run.returncode == 2 and "--label" in run.stderr and "Traceback" not in run.stderr


def test_compare_says_each_preprocessing_fact_that_differs_and_nothing_it_cannot_know() -> None:
    class Run:
        def __init__(self, name: str, inputs: dict[str, Any] | None) -> None:
            self.name = name
            self.results: dict[str, Any] = {"model": {"spec": name, **({"inputs": inputs} if inputs else {})}}

    eight = {"video": {"frames_per_clip": 8, "decode_backend": "pyav"}, "served": {"model_id": "a"}}
    sixteen = {"video": {"frames_per_clip": 16, "decode_backend": "decord"}, "served": {"model_id": "b"}}
    assert unlike_notes([Run("x", eight), Run("y", sixteen), Run("z", None)]) == [
        "not like for like: x vs y: video.frames_per_clip 8 vs 16",
        "not like for like: x vs y: video.decode_backend pyav vs decord"]  # who served is not preprocessing
    assert input_differences(Run("x", eight).results, Run("y", {"image": {"size": 3}}).results) == []


def test_merged_shards_list_the_fingerprints_their_servers_reported(nleye: Path, env: dict[str, str],
                                                                     tmp_path: Path) -> None:
    def redeployed(body: dict[str, Any]) -> str:  # during the second shard, after its probe saw fp_a
        fake.system_fingerprint = "fp_b"
        return default_reply(body)

    # (redeployed between the shards, the probes would see two models: the merge refuses such shards)
    with FakeOpenAIServer(system_fingerprint="fp_a") as fake:
        spec = f"openai:fake,base_url={fake.base_url},cache=false"
        for index in range(2):
            fake.reply = redeployed if index else default_reply
            done = abduct("eval", "nleye-triplet", "--model", spec, "--data", str(nleye), "--out",
                          str(tmp_path / f"s{index}"), "--quiet", "--shard", f"{index}/2", env=env)
            assert done.returncode == 0, done.stderr
    merged = abduct("merge", str(tmp_path / "m"), str(tmp_path / "s0"), str(tmp_path / "s1"), "--quiet", env=env)
    assert merged.returncode == 0, merged.stderr
    served = json.loads((tmp_path / "m" / "results.json").read_text())["model"]["inputs"]["served"]
    assert served["system_fingerprint"] == ["fp_a", "fp_b"] and served["model_id"] == "fake"
