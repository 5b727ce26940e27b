"""Provenance: each abduct distribution's version and source; a local checkout's commit and
dirty flag come from that checkout, never from a repository that merely encloses the env."""

from __future__ import annotations

import importlib.metadata as md
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import abduct._run.provenance as provenance
from abduct._run.provenance import _checkout_state, abduct_sources, distribution_source


def git(where: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(where), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("x = 1\n")
    git(repo, "init", "-q")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return repo


class FakeDist:
    def __init__(self, direct_url: dict[str, Any] | None) -> None:
        self.version = "9.9"
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        return json.dumps(self.direct_url) if self.direct_url is not None else None


def test_a_checkout_is_clean_then_dirty(checkout: Path) -> None:
    head = git(checkout, "rev-parse", "HEAD").strip()
    assert _checkout_state(checkout / "pkg") == (head, False)
    (checkout / "pkg" / "a.py").write_text("x = 2\n")
    _checkout_state.cache_clear()
    assert _checkout_state(checkout / "pkg") == (head, True)
    _checkout_state.cache_clear()


def test_an_editable_install_reports_its_own_checkout(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = (checkout / "pkg").as_uri()
    monkeypatch.setattr(provenance.md, "distribution", lambda name: FakeDist({"url": url, "dir_info": {"editable": True}}))
    _checkout_state.cache_clear()
    source = distribution_source("abduct-x")
    assert source == {"version": "9.9", "url": url, "editable": True,
                      "revision": git(checkout, "rev-parse", "HEAD").strip(), "dirty": False}


def test_an_index_install_has_no_revision_even_inside_a_repository(checkout: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(checkout)  # the environment sits in some repository: not this package's source
    monkeypatch.setattr(provenance.md, "distribution", lambda name: FakeDist(None))
    assert distribution_source("abduct-x") == {"version": "9.9", "url": None, "editable": False, "revision": None,
                                               "dirty": None}


def test_a_vcs_install_carries_its_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provenance.md, "distribution", lambda name: FakeDist(
        {"url": "https://example.org/abduct.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}))
    assert distribution_source("abduct-x")["revision"] == "abc123"  # type: ignore[index]


def test_the_installed_core_is_listed() -> None:
    sources = abduct_sources()
    assert sources["abduct-core"]["version"] == md.version("abduct-core")
    assert distribution_source("no-such-distribution-here") is None
