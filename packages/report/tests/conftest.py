from __future__ import annotations

from pathlib import Path

import pytest

from abduct_testing import registry_fixture
from abduct_testing.toy import install_toy_registry, write_toy_data

toy_registry = registry_fixture(install_toy_registry, "toy_registry")


@pytest.fixture
def toy_data(tmp_path: Path) -> Path:
    return write_toy_data(tmp_path / "toy")
