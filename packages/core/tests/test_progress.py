"""Progress: plain lines without control characters when stderr is not a terminal."""

from __future__ import annotations

import itertools

import pytest

import abduct.kit.progress_bars as progress_module
from abduct.kit.progress_bars import plain_progress, progress


def test_plain_lines_every_interval_and_at_the_end(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    clock = itertools.count(0.0, 4.0)  # each tick: 4 s later
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: next(clock))
    assert list(plain_progress(range(10), desc="retrieval", unit="unit", every=10.0)) == list(range(10))
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["retrieval: 3/10 units, 12 s", "retrieval: 6/10 units, 24 s", "retrieval: 9/10 units, 36 s",
                     "retrieval: done, 10 units in 44 s"]


def test_a_short_stage_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert list(plain_progress(iter([1, 2]), desc="x")) == [1, 2]
    assert capsys.readouterr().err == ""


def test_not_a_terminal_gets_no_escape_codes(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress_module, "PLAIN_SECONDS", 0.0)
    assert list(progress(range(3), desc="outer", unit="unit")) == [0, 1, 2]  # pytest's stderr is no terminal
    err = capsys.readouterr().err
    assert err and "\r" not in err and "\x1b" not in err
    assert list(progress(range(3), desc="q", quiet=True)) == [0, 1, 2]
    assert capsys.readouterr().err == ""
