from __future__ import annotations

from pathlib import Path

import pytest

from abduct_sherlock.synth import synthesize


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small synthetic corpus shared by read-only tests (2+ retrieval chunks)."""
    return synthesize(tmp_path_factory.mktemp("sherlock") / "data", images=48, seed=0, chunk_instances=20)
