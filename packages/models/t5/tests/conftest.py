"""Fixtures: the toy benchmark in the process-wide registry, and its pairs as text (t5 reads the
clue as context: no images)."""

from __future__ import annotations

from pathlib import Path

import pytest

from abduct_testing import registry_fixture
from abduct_testing.toy import install_toy_registry, write_toy_pairs

test_registry = registry_fixture(install_toy_registry)


@pytest.fixture(scope="session")
def pair_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_toy_pairs(tmp_path_factory.mktemp("pairs"), 24, 8, group=4, images=False)
