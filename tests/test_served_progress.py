"""A served run says what it does (#46 item 5): progress with requests done of about how many,
their rate, cache hits and the time left, every few seconds in a log and on a terminal's bar; a
run whose answers are mostly unparsed ends with a loud warning naming the reasons."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest

import abduct._engine.pace as pace
from abduct_nleye.synth import synthesize as nleye_corpus
from abduct_vlm.testing import FakeOpenAIServer
from conftest import abduct

LINE = re.compile(r"^triplet: (\d+)/\d+ units, (\d+)(?:/~(\d+))? requests, [\d.]+/s, (\d+) cached, "
                  r"(?:about \d+ (?:s|min|h) left|\d+ s in all)$")


@pytest.fixture(scope="module")
def nleye(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nleye_corpus(tmp_path_factory.mktemp("nleye") / "data", samples=48, seed=0)  # 3 units of 32 requests


def _eval(fake: FakeOpenAIServer, data: Path, out: Path, cache: Path, *extra: str) -> Any:
    return abduct("eval", "nleye-triplet", "--model", f"openai:m,base_url={fake.base_url},concurrency=4", "--data",
                  str(data), "--out", str(out), "--batch-size", "4", *extra, env={"ABDUCT_CACHE_DIR": str(cache)})


def test_a_log_gets_requests_rate_cache_hits_and_time_left_every_few_seconds(
        nleye: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pace, "EVERY", 0.1)  # a log's line every 5 s, made short
    with FakeOpenAIServer(latency=0.02) as fake:
        run = _eval(fake, nleye, tmp_path / "a", tmp_path / "cache", "--limit", "32")  # 2 of 3 units: 64 requests
        assert run.returncode == 0, run.stderr
        rerun = _eval(fake, nleye, tmp_path / "b", tmp_path / "cache")  # 64 from the cache, 32 sent
        assert rerun.returncode == 0, rerun.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("triplet:")]
    assert len(lines) >= 3 and all(LINE.match(line) for line in lines), run.stderr
    assert "about" in lines[1] and "/~64 requests" in run.stderr  # an estimate of the whole before the end
    assert lines[-1].startswith("triplet: 2/2 units, 64 requests,") and lines[-1].endswith("s in all")
    last = [line for line in rerun.stderr.splitlines() if line.startswith("triplet:")][-1]
    assert last.startswith("triplet: 3/3 units, 96 requests,") and ", 64 cached, " in last, rerun.stderr


def test_a_terminal_gets_the_same_figures_in_its_bar(nleye: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pace, "_terminal", lambda: True)
    monkeypatch.setattr(pace, "REFRESH", 0.05)
    with FakeOpenAIServer(latency=0.02) as fake:
        run = _eval(fake, nleye, tmp_path / "a", tmp_path / "cache", "--limit", "16")
    assert run.returncode == 0, run.stderr
    assert re.search(r"triplet: .*\d+/1 .*\[.*0/1 units, \d+/~32 requests, [\d.]+/s, 0 cached, about \d+ s left",
                     run.stderr), run.stderr


def test_a_quiet_run_shows_no_progress(nleye: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pace, "EVERY", 0.05)
    with FakeOpenAIServer(latency=0.02) as fake:
        run = _eval(fake, nleye, tmp_path / "a", tmp_path / "cache", "--limit", "16", "--quiet")
    assert run.returncode == 0 and "triplet:" not in run.stderr, run.stderr


@pytest.mark.parametrize("as_json", [False, True])
def test_a_mostly_unparsed_run_ends_with_a_warning_naming_the_reasons(as_json: bool, nleye: Path,
                                                                      tmp_path: Path) -> None:
    lock, replies = threading.Lock(), ["", "I think so"] * 9  # 18 of the 32 answers unread: over half

    def reply(body: dict[str, Any]) -> str:
        with lock:
            return replies.pop() if replies else "1"

    with FakeOpenAIServer(reply=reply) as fake:
        run = _eval(fake, nleye, tmp_path / "a", tmp_path / "cache", "--limit", "16", "--no-cache",
                    "--json" if as_json else "--quiet")
    assert run.returncode == 0, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"WARNING: 18 of 32 answers \(56%\) could not be read \((empty 9, no option found 9|no option "
                        r"found 9, empty 9)\); the metrics measure the reading more than the model: check the prompt, "
                        r"max_new_tokens and reasoning= \(samples.html shows the unparsed ones\)", last), last


def test_a_mostly_read_run_does_not_warn(nleye: Path, tmp_path: Path) -> None:
    lock, count = threading.Lock(), [0]

    def reply(body: dict[str, Any]) -> str:  # every fourth answer empty: a quarter unread
        with lock:
            count[0] += 1
            return "" if count[0] % 4 == 0 else "1"

    with FakeOpenAIServer(reply=reply) as fake:
        run = _eval(fake, nleye, tmp_path / "a", tmp_path / "cache", "--limit", "16", "--quiet")
    assert run.returncode == 0 and "WARNING" not in run.stderr, run.stderr
    assert '"unparsed": 8,' in (tmp_path / "a" / "results.json").read_text()
