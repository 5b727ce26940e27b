from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct.host import Registry, build_registry, reset_registry
from abduct_testing.toy import ToyPlugin, write_toy_data


@pytest.fixture
def toy_registry() -> Iterator[Registry]:
    """The process-wide registry with the toy benchmark added (as the CLI will see it)."""
    registry = build_registry(extra_plugins=[("toy", ToyPlugin())])
    reset_registry(registry)
    yield registry
    reset_registry()


@pytest.fixture
def toy_data(tmp_path: Path) -> Path:
    return write_toy_data(tmp_path / "toy")
