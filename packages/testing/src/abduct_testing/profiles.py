"""How many examples the property tests draw: two hypothesis profiles for abduct's suites.

- ``ci`` (the default): the counts the tests name. Their value is in the shapes of hostile
  input they reach (every kind of mutation, of every field), which a few dozen examples cover;
  ``./dev test`` runs this on every change.
- ``thorough``: ``THOROUGH_FACTOR`` times as many examples, for the tests that name a count
  (through ``examples(n)``) and for those that take hypothesis's default. ``./dev test
  --thorough`` sets ``ABDUCT_HYPOTHESIS_PROFILE=thorough``; run it before a release, or after
  changing a loader.

abduct-testing registers this module as a pytest plugin (its ``pytest11`` entry point): every
suite run where the kit is installed loads the profile, ``./dev test``'s sessions included.
"""

from __future__ import annotations

import os
from typing import Any

PROFILE_VARIABLE = "ABDUCT_HYPOTHESIS_PROFILE"
PROFILES = ("ci", "thorough")
THOROUGH_FACTOR = 10
DEFAULT_EXAMPLES = 100  # hypothesis's own default


def profile() -> str:
    """The profile asked for by ``$ABDUCT_HYPOTHESIS_PROFILE`` (``ci`` when unset)."""
    name = os.environ.get(PROFILE_VARIABLE) or "ci"
    if name not in PROFILES:
        raise ValueError(f"{PROFILE_VARIABLE}={name!r}: choose {' or '.join(PROFILES)}")
    return name


def examples(n: int) -> int:
    """``n`` examples under ``ci``, ``THOROUGH_FACTOR * n`` under ``thorough``."""
    return n * THOROUGH_FACTOR if profile() == "thorough" else n


def load_profile() -> None:
    """Register both profiles with hypothesis and load the one asked for."""
    from hypothesis import settings

    settings.register_profile("ci", max_examples=DEFAULT_EXAMPLES)
    settings.register_profile("thorough", max_examples=DEFAULT_EXAMPLES * THOROUGH_FACTOR)
    settings.load_profile(profile())


def pytest_configure(config: Any) -> None:
    """The pytest hook: the profile is loaded before any test module is collected."""
    import pytest

    try:
        import hypothesis  # noqa: F401
    except ImportError:  # a suite without property tests
        return
    try:
        load_profile()
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_report_header(config: Any) -> str:
    return f"abduct hypothesis profile: {profile()} (examples x{examples(1)})"
