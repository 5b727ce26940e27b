from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def abduct(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed `abduct` CLI as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "abduct", *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=cwd,
    )


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
