"""A JVM that fails (out of memory, say) is named with its own message: the PTB tokenizer's and
METEOR's error line keeps ``java.lang.OutOfMemoryError: Java heap space``, not the last line of
the stack trace or a ``could not convert string to float``. The JVM is a stand-in ``java`` on
PATH that fails as a real one does when its heap runs out (a resource a test cannot exhaust)."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct_metrics import _coco
from abduct_metrics.java import jvm_said
from abduct_testing import main

OUT_OF_MEMORY = """Exception in thread "main" java.lang.OutOfMemoryError: Java heap space
\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)
\tat edu.cmu.meteor.scorer.MeteorScorer.getMeteorStats(MeteorScorer.java:170)
\tat Meteor.main(Meteor.java:59)
"""


def _fake_java(folder: Path, tokenizes: bool) -> Path:
    """``java`` that runs out of heap at once, or (``tokenizes``) only when it is not the tokenizer:
    as the PTB tokenizer it prints its input file's lines (METEOR then gets tokens to fail on)."""
    folder.mkdir()
    java = folder / "java"
    tokenizer = 'case "$*" in *PTBTokenizer*) for a; do last=$a; done; cat "$last"; exit 0;; esac\n' if tokenizes else ""
    java.write_text(f"#!/bin/sh\n{tokenizer}cat >&2 <<'EOF'\n{OUT_OF_MEMORY}EOF\nexit 1\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return folder


@pytest.fixture
def no_meteor() -> Iterator[None]:
    _coco._forget_meteor()  # a live JVM from another test would answer instead
    yield
    _coco._forget_meteor()


def _files(tmp_path: Path) -> list[str]:
    (tmp_path / "p.json").write_text(json.dumps({"a": "a dog runs", "b": "a cat sits"}))
    (tmp_path / "r.json").write_text(json.dumps({"a": ["a dog is running"], "b": ["the cat sat"]}))
    return ["--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json")]


@pytest.mark.parametrize(("metric", "tokenizes", "who"), [("cider", False, "PTB tokenizer (Java) failed (exit 1)"),
                                                          ("meteor", True, "METEOR (Java) failed")])
def test_a_jvm_out_of_memory_is_said_in_the_error_line(tmp_path: Path, metric: str, tokenizes: bool, who: str,
                                                       monkeypatch: pytest.MonkeyPatch, no_meteor: None,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", f"{_fake_java(tmp_path / 'bin', tokenizes)}:/usr/bin:/bin")
    args = _files(tmp_path)
    capsys.readouterr()
    assert main(["metric", metric, *args]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {who}: java.lang.OutOfMemoryError: Java heap space\n", err


def test_what_a_jvm_said_in_one_line() -> None:
    assert jvm_said(OUT_OF_MEMORY.encode()) == "java.lang.OutOfMemoryError: Java heap space"
    assert jvm_said("Picked up JAVA_TOOL_OPTIONS: -Xmx1m\nError occurred during initialization of VM\n"
                    "Too small maximum heap\n") == "Error occurred during initialization of VM / Too small maximum heap"
    assert jvm_said("loading\nsomething went wrong\n") == "something went wrong"
    assert jvm_said(b"") == ""
