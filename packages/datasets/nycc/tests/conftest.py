from __future__ import annotations

from pathlib import Path

import pytest

from abduct_nycc.synth import synthesize


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthesize(tmp_path_factory.mktemp("nycc") / "data", per_fold=4, seed=0)
