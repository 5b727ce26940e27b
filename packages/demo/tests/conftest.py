from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from abduct.host import Registry, build_registry, reset_registry  # noqa: E402
from demo_plugin import ToyDemoPlugin  # noqa: E402


@pytest.fixture
def toy_registry() -> Iterator[Registry]:
    """The process-wide registry with the toy plugin added (as the CLI will see it)."""
    registry = build_registry(extra_plugins=[("toy", ToyDemoPlugin())])
    reset_registry(registry)
    yield registry
    reset_registry()
