from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from abduct._registry.registry import Registry, build_registry, reset_registry
from toy_plugin import ToyPlugin, write_toy_data  # noqa: E402


@pytest.fixture
def toy_registry() -> Iterator[Registry]:
    """The process-wide registry with the toy plugin added (as the CLI will see it)."""
    registry = build_registry(extra_plugins=[("toy", ToyPlugin())])
    reset_registry(registry)
    yield registry
    reset_registry()


@pytest.fixture
def toy_data(tmp_path: Path) -> Path:
    return write_toy_data(tmp_path / "toy")
