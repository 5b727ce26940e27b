"""Every test of the package sees one cache directory of its own (built tiny models are
shared by the session; nothing is written to the user's cache)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("abduct-cache")
    before = os.environ.get("ABDUCT_CACHE_DIR")
    os.environ["ABDUCT_CACHE_DIR"] = str(root)
    yield root
    if before is None:
        os.environ.pop("ABDUCT_CACHE_DIR", None)
    else:
        os.environ["ABDUCT_CACHE_DIR"] = before
