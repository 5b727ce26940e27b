"""Fixtures: the test plugin (tiny pair and choice datasets) and a private feature cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct.plugins import Registry, reset_registry
from abduct_regions.testing import install_test_plugin, write_choice_data, write_pair_data


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABDUCT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def test_registry() -> Iterator[Registry]:
    registry = install_test_plugin()
    yield registry
    reset_registry(None)


@pytest.fixture(scope="module")
def pair_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_pair_data(tmp_path_factory.mktemp("pairs"))


@pytest.fixture(scope="module")
def choice_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_choice_data(tmp_path_factory.mktemp("choices"))
