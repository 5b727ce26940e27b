from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from abduct_testing import registry_fixture
from abduct_testing.toy import install_toy_registry, write_toy_data

# the toy benchmark in this process, for `abduct launch` run here (it checks the task's name)
toy_registry = registry_fixture(install_toy_registry, name="toy_registry")

# What the jobs run: abduct with the toy benchmark added, as an installed plugin would be; jobs are
# other processes, which see only what is installed
# (a file "fail-shard-I/N" beside it makes shard I/N fail, as a node that dies would)
WRAPPER = f"""#!{sys.executable}
import sys
from pathlib import Path
from abduct_testing.toy import install_toy_registry
from abduct.host import main
if "--shard" in sys.argv and (Path(__file__).parent / ("fail-shard-" + sys.argv[sys.argv.index("--shard") + 1].replace("/", "-of-"))).exists():
    sys.exit(3)
install_toy_registry()
sys.exit(main())
"""


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def toy_abduct(tmp_path: Path) -> Path:
    return executable(tmp_path / "bin with space" / "abduct-toy", WRAPPER)


@pytest.fixture
def toy_data(tmp_path: Path) -> Path:
    return write_toy_data(tmp_path / "toy data", items=24)


@pytest.fixture
def fake_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder put first on PATH, for fake engine clients."""
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder
