"""Fixtures: the test plugin in the process-wide registry, a tiny pair dataset, t5:tiny."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from t5_helpers import install_test_plugin, write_pair_data

from abduct.host import Registry, reset_registry


@pytest.fixture
def test_registry() -> Iterator[Registry]:
    registry = install_test_plugin()
    yield registry
    reset_registry(None)


@pytest.fixture(scope="session")
def pair_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_pair_data(tmp_path_factory.mktemp("pairs"))
