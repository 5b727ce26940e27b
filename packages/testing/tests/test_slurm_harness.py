"""abduct_testing.slurm without a cluster: what it refuses and how (the cluster itself runs in
the slurm session's tests/slurm)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from abduct_testing import slurm


def test_missing_daemons_skip_unless_they_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm, "missing_programs", lambda: ["munged", "slurmctld"])
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.delenv("ABDUCT_SLURM_READY", raising=False)
    monkeypatch.delenv("ABDUCT_REQUIRE_SLURM", raising=False)
    with pytest.raises(pytest.skip.Exception, match="munged, slurmctld not on PATH"):
        slurm.slurm_or_skip()
    monkeypatch.setenv("ABDUCT_REQUIRE_SLURM", "1")
    with pytest.raises(pytest.fail.Exception, match="munged, slurmctld not on PATH"):
        slurm.slurm_or_skip()


def test_not_root_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.delenv("ABDUCT_SLURM_READY", raising=False)
    monkeypatch.delenv("ABDUCT_REQUIRE_SLURM", raising=False)
    with pytest.raises(pytest.skip.Exception, match="as root"):
        slurm.slurm_or_skip()
    with pytest.raises(slurm.SlurmUnavailable, match="not root"), slurm.slurm_cluster():
        pass


def test_the_tests_wait_for_a_background_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ready = tmp_path / "slurm-ready"
    threading.Timer(0.3, ready.touch).start()
    monkeypatch.setenv("ABDUCT_SLURM_READY", str(ready))
    monkeypatch.delenv("ABDUCT_REQUIRE_SLURM", raising=False)
    monkeypatch.setattr(slurm, "missing_programs", lambda: ["sbatch"])
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    started = time.monotonic()
    with pytest.raises(pytest.skip.Exception, match="sbatch not on PATH"):
        slurm.slurm_or_skip()
    assert ready.exists() and time.monotonic() - started >= 0.25


def test_a_daemon_that_will_not_start_is_named_with_its_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A munged that exits at once (a stand-in on PATH): the error names it and what it printed."""
    for name in (*slurm.DAEMONS, *slurm.CLIENTS):
        fake = tmp_path / name
        fake.write_text("#!/bin/sh\necho 'no key for you' >&2\nexit 3\n")
        fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(slurm.SlurmUnavailable, match=r"munged exited 3 at start: no key for you"), \
            slurm.slurm_cluster():
        pass


def test_every_file_of_the_cluster_lies_in_its_folder(tmp_path: Path) -> None:
    conf = slurm.slurm_conf(tmp_path, "node1")
    paths = [line.split("=", 1)[1].removeprefix("socket=") for line in conf.splitlines()
             if line.split("=", 1)[0].endswith(("File", "Location", "Dir", "AuthInfo"))]
    assert len(paths) == 7 and all(path.startswith(str(tmp_path)) for path in paths)
    assert "NodeName=node1 CPUs=2 " in conf and "SelectType=select/cons_tres" in conf
