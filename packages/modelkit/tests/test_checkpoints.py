"""Weights a library wrote owner-only (safetensors creates its files 0o600) get the mode ``open``
would give them, so colleagues on a shared machine can read a saved model."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from abduct_modelkit import honour_umask


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_honour_umask_opens_up_what_a_library_wrote_owner_only(tmp_path: Path, umask: int) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "w.safetensors").write_bytes(b"x")
    (tmp_path / "d" / "config.json").write_text("{}")
    for path in (tmp_path / "d", tmp_path / "d" / "sub", tmp_path / "d" / "sub" / "w.safetensors",
                 tmp_path / "d" / "config.json"):
        path.chmod(0o700 if path.is_dir() else 0o600)
    previous = os.umask(umask)
    try:
        honour_umask(tmp_path / "d")
        after = os.umask(umask)
    finally:
        os.umask(previous)
    assert after == umask, "read without changing it"
    found = {str(p.relative_to(tmp_path)): stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "d").rglob("*")}
    assert found == {"d/sub": 0o777 & ~umask, "d/sub/w.safetensors": 0o666 & ~umask, "d/config.json": 0o666 & ~umask}
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o777 & ~umask
