"""One synthetic BlackSwan corpus per session (real mp4 clips), and a private cache for every test."""

from __future__ import annotations

from pathlib import Path

import pytest

from abduct_blackswan.synth import synthesize
from abduct_testing import private_cache_fixture

private_cache = private_cache_fixture()


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("blackswan") / "data"
    synthesize(out, videos=12, seed=1)
    return out
