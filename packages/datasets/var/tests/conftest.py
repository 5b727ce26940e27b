"""A tiny synthetic VAR corpus (real mp4 files), made once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from abduct_var.synth import synthesize


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("var_corpus")
    synthesize(out, examples=8, seed=1)
    return out
