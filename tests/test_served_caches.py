"""Caches a user controls (#46 item 5): every cache the project keeps is listed here, and
``--no-cache`` and ``--cache-dir`` govern each; a served model redeployed under the same name is
asked again (its /models entry is part of the cache key and of the model's fingerprint); a dead,
misaddressed, refusing or broken server fails in seconds, one line, exit 2, nothing sent."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from abduct.kit.cache import cache_dir_for, default_cache_dir, run_caches
from abduct_nleye.synth import synthesize as nleye_corpus
from abduct_vlm.testing import FakeOpenAIServer
from conftest import ROOT, abduct

# Every place a package keeps something between runs, and what governs it. A new one fails
# test_every_cache_is_listed until it is added here (and to the core README's list).
CACHES = {
    # the core's embedding and generation caches (the model's and the judge's): engine_for(cache_dir, use_cache)
    "packages/core/src/abduct/_engine/models.py": "run",
    "packages/core/src/abduct/_engine/generation.py": "run",
    "packages/core/src/abduct/_run/collect.py": "run",
    "packages/core/src/abduct/_run/staged.py": "run",
    "packages/core/src/abduct/_run/write.py": "run",  # samples.html thumbnails
    "packages/core/src/abduct/_run/merge.py": "run",  # merge's thumbnails (merge --no-cache)
    "packages/core/src/abduct/_run/evaluate.py": "run",  # sets run_caches for the plugins' own
    "packages/datasets/var/src/abduct_var/tasks.py": "run",  # frames of the strips, under the run's cache
    "packages/models/vlm/src/abduct_vlm/served.py": "cache_dir_for",  # served responses
    "packages/models/regions/src/abduct_regions/family.py": "cache_dir_for",  # region features
    "packages/models/regions/src/abduct_regions/featurizer.py": "run",  # given its directory by family.py
    "packages/video/frames/src/abduct_video/_sampler.py": "caller",  # frames: only where a caller gives a directory
    # not answers but files a run needs (built tiny weights, images extracted from a parquet): under
    # --cache-dir when given, written also under --no-cache
    "packages/models/vlm/src/abduct_vlm/_loading.py": "data",
    "packages/datasets/whoops/src/abduct_whoops/_hf.py": "data",
    "packages/datasets/nycc/src/abduct_nycc/loader.py": "data",
}
CACHE_USE = re.compile(r"default_cache_dir\(|cache_dir_for\(|EmbeddingCache\(|TextCache\(|ResponseCache\(|"
                       r"FrameCache\(|\.cache_dir\b")


def test_every_cache_is_listed() -> None:
    found = set()
    for path in (ROOT / "packages").glob("**/src/**/*.py"):
        relative = path.relative_to(ROOT).as_posix()
        if "/kit/" in relative or relative.endswith("__init__.py") or "/tests/" in relative:
            continue  # the caches' own definitions and re-exports
        if CACHE_USE.search(path.read_text(encoding="utf-8")):
            found.add(relative)
    assert sorted(found - set(CACHES)) == [], "a cache not listed in CACHES: how do --no-cache/--cache-dir govern it?"
    for relative, how in CACHES.items():
        if how == "cache_dir_for":
            assert "cache_dir_for(" in (ROOT / relative).read_text(encoding="utf-8"), relative


def test_cache_dir_for_follows_the_runs_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABDUCT_CACHE_DIR", str(tmp_path / "default"))
    assert cache_dir_for("served") == tmp_path / "default" / "served"
    with run_caches(tmp_path / "mine", use=True):
        assert cache_dir_for("regions") == tmp_path / "mine" / "regions" and default_cache_dir() == tmp_path / "mine"
    with run_caches(None, use=False):
        assert cache_dir_for("served") is None and default_cache_dir() == tmp_path / "default"
    assert cache_dir_for("served") == tmp_path / "default" / "served"  # left as it was


@pytest.fixture(scope="module")
def nleye(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nleye_corpus(tmp_path_factory.mktemp("nleye") / "data", samples=8, seed=0)


def _eval(task: str, model: str, data: Path, out: Path, default: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    run = abduct("eval", task, "--model", model, "--data", str(data), "--out", str(out), "--quiet", "--json",
                 *extra, env={"ABDUCT_CACHE_DIR": str(default)})
    return run.returncode, (json.loads(run.stdout) if run.returncode == 0 else {}), run.stderr


def _files(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.is_file()] if directory.exists() else []


def test_no_cache_and_cache_dir_govern_every_cache_of_a_served_run(nleye: Path, tmp_path: Path) -> None:
    """A generated explanation judged by a served judge, the model served too: the core's text
    caches (model and judge), the served responses and the pages' thumbnails all follow the flags."""
    default = tmp_path / "default"
    with FakeOpenAIServer() as fake:
        model, judge = f"openai:gen,base_url={fake.base_url}", f"openai:judge,base_url={fake.base_url}"
        args = ("--judge", judge, "--limit", "2")
        code, _, err = _eval("nleye-explanation", model, nleye, tmp_path / "a", default, "--cache-dir",
                             str(tmp_path / "mine"), *args)
        assert code == 0, err
        sent = len(fake.requests)
        kinds = {p.name for p in (tmp_path / "mine").iterdir()}
        assert "served" in kinds and len(kinds) >= 2, kinds  # the responses and the core's generations
        assert _files(default) == []
        code, _, err = _eval("nleye-explanation", model, nleye, tmp_path / "b", default, "--cache-dir",
                             str(tmp_path / "empty"), *args)
        assert code == 0, err
        assert len(fake.requests) == 2 * sent  # an empty --cache-dir: everything asked again
        code, results, err = _eval("nleye-explanation", model, nleye, tmp_path / "c", default, "--no-cache", *args)
        assert code == 0, err
        assert len(fake.requests) == 3 * sent and _files(default) == []
        assert results["tokens"]["total"]["cached"] == 0
        code, results, err = _eval("nleye-explanation", model, nleye, tmp_path / "d", default, "--cache-dir",
                                   str(tmp_path / "mine"), *args)
        assert code == 0, err
        assert len(fake.requests) == 3 * sent  # the first cache answers everything
        assert results["tokens"]["total"]["cached"] == sent


@pytest.mark.parametrize("change", ["root", "model_id"])
def test_a_model_redeployed_under_the_same_name_is_asked_again(change: str, nleye: Path, tmp_path: Path) -> None:
    """The issue's case: a server answering "1", then "2" under the same model name (other weights
    behind it, or another model id reported): a new run reaches the server and reads "2"."""
    answer = {"text": "1"}
    with FakeOpenAIServer(reply=lambda body: answer["text"], model_id="m", root="ckpt-a") as fake:
        spec = f"openai:m,base_url={fake.base_url}"
        code, first, err = _eval("nleye-triplet", spec, nleye, tmp_path / "a", tmp_path / "cache")
        assert code == 0, err
        sent = fake.served
        code, again, err = _eval("nleye-triplet", spec, nleye, tmp_path / "b", tmp_path / "cache")
        assert code == 0 and fake.served == sent, err  # unchanged: all from the cache
        answer["text"] = "2"
        if change == "root":
            fake.root = "ckpt-b"
        else:
            fake.model_id = "m-2"
        code, redeployed, err = _eval("nleye-triplet", spec, nleye, tmp_path / "c", tmp_path / "cache")
        assert code == 0, err
    assert fake.served == 2 * sent
    assert redeployed["tokens"]["total"]["cached"] == 0 and again["tokens"]["total"]["cached"] == sent
    answers = [json.loads(line)["outputs"] for line in (tmp_path / "c" / "predictions.jsonl").open()]
    olds = [json.loads(line)["outputs"] for line in (tmp_path / "a" / "predictions.jsonl").open()]
    assert {a for pair in olds for a in pair} == {"1"} and {a for pair in answers for a in pair} == {"2"}


def test_a_new_system_fingerprint_under_the_same_name_is_asked_again(nleye: Path, tmp_path: Path) -> None:
    """/models unchanged, only the ``system_fingerprint`` the answers report (a new snapshot behind
    the same name): the probe's one chat request reads it, so a new run reaches the server and
    reads "2"; back on the first fingerprint, the first run's cache answers again."""
    answer = {"text": "1"}
    with FakeOpenAIServer(reply=lambda body: answer["text"], model_id="m", root="ckpt",
                          system_fingerprint="fp-a") as fake:
        spec = f"openai:m,base_url={fake.base_url}"
        code, first, err = _eval("nleye-triplet", spec, nleye, tmp_path / "a", tmp_path / "cache")
        assert code == 0, err
        sent = fake.served
        answer["text"], fake.system_fingerprint = "2", "fp-b"
        code, changed, err = _eval("nleye-triplet", spec, nleye, tmp_path / "b", tmp_path / "cache")
        assert code == 0 and fake.served == 2 * sent, err
        fake.system_fingerprint = "fp-a"
        code, back, err = _eval("nleye-triplet", spec, nleye, tmp_path / "c", tmp_path / "cache")
        assert code == 0 and fake.served == 2 * sent, err  # all from the cache: only the probe was sent
    assert fake.pings == 3 and back["tokens"]["total"]["cached"] == sent and changed["tokens"]["total"]["cached"] == 0
    assert [changed["model"]["inputs"]["served"]["system_fingerprint"], back["model"]["inputs"]["served"]
            ["system_fingerprint"]] == ["fp-b", "fp-a"]
    outputs = {run: {a for line in (tmp_path / run / "predictions.jsonl").open() for a in json.loads(line)["outputs"]}
               for run in "abc"}
    assert outputs == {"a": {"1"}, "b": {"2"}, "c": {"1"}}


@pytest.mark.parametrize(("server", "base", "expected"), [
    ({}, "closed", r"cannot reach the server at http://127\.0\.0\.1:\d+/v1 \(.*refused.*\); nothing was sent"),
    ({}, "no_v1", r"/models: HTTP 404 \(no route /models\); an OpenAI-compatible base_url usually ends in /v1 "
                  r"\(base_url=http://127\.0\.0\.1:\d+/v1\)"),
    ({"models_status": 401, "always": "refuse"}, "v1", r"/v1/models refused the probe: HTTP 401 \(fake server error 401\)"),
    ({"models_status": 501, "always": "server_error"}, "v1", r"/v1/models: HTTP 501 \(fake server error 501\); nothing"),
    ({"models_status": 503, "always": "server_error"}, "v1", r"/v1/models: HTTP 503 \(fake server error 503\); nothing"),
], ids=["refused", "no-v1", "401", "501", "503"])
def test_a_dead_or_misaddressed_server_fails_in_seconds_in_one_line(server: dict[str, Any], base: str, expected: str,
                                                                    nleye: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(**server) as fake:
        url = {"v1": fake.base_url, "no_v1": fake.base_url.removesuffix("/v1"), "closed": fake.base_url}[base]
        if base == "closed":
            fake.close()
        started = time.monotonic()
        code, _, err = _eval("nleye-triplet", f"openai:m,base_url={url}", nleye, tmp_path / "o", tmp_path / "c")
        took = time.monotonic() - started
        assert fake.requests == [] and fake.pings == 0  # /models caught it: no chat request sent
    assert code == 2 and took < 10, (code, took, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and re.search(expected, lines[0]), err
