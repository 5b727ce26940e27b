"""The test kit's two switches for ./dev test: hypothesis profiles (``--thorough``) and the
browser tests failing, not skipping, once Chromium is meant to be there."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abduct_testing import browser, profiles


def test_examples_are_the_named_count_in_ci_and_ten_times_that_when_thorough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(profiles.PROFILE_VARIABLE, raising=False)
    assert profiles.profile() == "ci" and profiles.examples(40) == 40
    monkeypatch.setenv(profiles.PROFILE_VARIABLE, "thorough")
    assert profiles.examples(40) == 400
    monkeypatch.setenv(profiles.PROFILE_VARIABLE, "fast")
    with pytest.raises(ValueError, match="choose ci or thorough"):
        profiles.profile()


def test_the_thorough_profile_draws_more_examples_for_tests_naming_no_count(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[int] = []
    counts = {}
    before = settings.default
    try:
        for name in profiles.PROFILES:
            monkeypatch.setenv(profiles.PROFILE_VARIABLE, name)
            profiles.load_profile()

            @given(st.integers())
            def count(x: int) -> None:
                drawn.append(x)

            drawn.clear()
            count()
            counts[name] = len(drawn)
            assert settings.default.max_examples == profiles.examples(profiles.DEFAULT_EXAMPLES)
    finally:
        settings.register_profile("restored", before)
        settings.load_profile("restored")
    assert counts["ci"] <= profiles.DEFAULT_EXAMPLES < counts["thorough"]


def test_a_missing_browser_skips_unless_it_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser, "chromium_path", lambda: None)
    monkeypatch.delenv("ABDUCT_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no chromium on PATH"):
        browser.browser_or_skip()
    monkeypatch.setenv("ABDUCT_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="no chromium on PATH"):
        browser.browser_or_skip()


def test_a_browser_test_waits_for_a_background_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``./dev test`` installs Chromium while the sessions run; a browser test that starts first
    waits until ``ABDUCT_BROWSER_READY`` appears, and only then looks for the browser."""
    ready = tmp_path / "browser-ready"
    threading.Timer(0.3, ready.touch).start()
    monkeypatch.setenv("ABDUCT_BROWSER_READY", str(ready))
    monkeypatch.delenv("ABDUCT_REQUIRE_BROWSER", raising=False)
    monkeypatch.setattr(browser, "chromium_path", lambda: None)
    started = time.monotonic()
    with pytest.raises(pytest.skip.Exception, match="no chromium on PATH"):
        browser.browser_or_skip()
    assert ready.exists() and time.monotonic() - started >= 0.25
    browser.wait_for_install(tmp_path / "never", timeout=0.2)  # gives up after its timeout
