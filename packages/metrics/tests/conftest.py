"""Generated caption data and tiny random BERT models built locally (no downloads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from abduct_metrics.testing import build_tiny_bert, generated_data


@pytest.fixture(scope="session")
def caption_data() -> tuple[dict[str, str], dict[str, list[str]]]:
    return generated_data(80, seed=1)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), seed=1)


@pytest.fixture(scope="session")
def tiny_bem(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-label classifier with three segment embeddings (original BEM layout)."""
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bem"), classifier=True, type_vocab_size=3, seed=2)


@pytest.fixture(scope="session")
def tiny_bem_pairs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-label classifier with two segment embeddings (the PyTorch reproduction's layout)."""
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bem_pairs"), classifier=True, type_vocab_size=2, seed=3)
