"""abduct_modelkit.offline: offline mode from the environment, a quick probe of the hub endpoint, the hub
client switched to its offline mode while weights load, and the one-line error."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct_modelkit.offline import (
    hub_access,
    hub_cache_dir,
    hub_online,
    offline_requested,
    reachable,
    weights_unavailable,
)
from abduct_testing import closed_port, unreachable_hub


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("name", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
@pytest.mark.parametrize("value, offline", [("1", True), ("true", True), ("ON", True), ("0", False), ("", False)])
def test_offline_variables(monkeypatch: pytest.MonkeyPatch, name: str, value: str, offline: bool) -> None:
    monkeypatch.setenv(name, value)
    assert offline_requested() is offline


def test_offline_mode_never_probes(monkeypatch: pytest.MonkeyPatch, listening: int) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listening}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert hub_online() is False


def test_a_closed_endpoint_is_offline_within_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    port = closed_port()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}/")
    started = time.monotonic()
    with hub_access() as hub:
        assert hub.online is False and hub.reason == f"127.0.0.1:{port} unreachable"
        # the hub client and transformers see offline mode while weights load
        assert os.environ["HF_HUB_OFFLINE"] == os.environ["TRANSFORMERS_OFFLINE"] == "1"
    assert time.monotonic() - started < 5
    assert "HF_HUB_OFFLINE" not in os.environ and "TRANSFORMERS_OFFLINE" not in os.environ


def test_a_listening_endpoint_is_online(monkeypatch: pytest.MonkeyPatch, listening: int) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listening}")
    with hub_access() as hub:
        assert hub.online is True and hub.reason == ""
        assert "HF_HUB_OFFLINE" not in os.environ
    assert reachable(f"http://127.0.0.1:{listening}/any/path") is True
    assert reachable("no-scheme-or-host") is False


def test_offline_values_set_by_the_user_are_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "yes")
    with hub_access() as hub:
        assert hub.reason == "TRANSFORMERS_OFFLINE set"
    assert os.environ["TRANSFORMERS_OFFLINE"] == "yes" and "HF_HUB_OFFLINE" not in os.environ


def test_the_hub_client_switches_to_offline_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    constants = pytest.importorskip("huggingface_hub.constants")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    with hub_access():
        assert constants.HF_HUB_OFFLINE is True
    assert constants.HF_HUB_OFFLINE is False


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/x")
    assert str(hub_cache_dir()) == "/x/huggingface/hub"
    monkeypatch.setenv("HF_HOME", "/h")
    assert str(hub_cache_dir()) == "/h/hub"
    monkeypatch.setenv("HF_HUB_CACHE", "/c")
    assert str(hub_cache_dir()) == "/c"


def test_the_error_is_one_line_naming_what_and_how(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", "/models")
    error = weights_unavailable("t5:google/t5-large", ["local directory google/t5-large", "hub google/t5-large in /m"],
                                how="t5:/path/to/dir", reason="huggingface.co unreachable")
    text = str(error)
    assert "\n" not in text
    for part in ("t5:google/t5-large", "huggingface.co unreachable", "local directory google/t5-large",
                 "t5:/path/to/dir", "/models/hub", "HF_HUB_OFFLINE=1"):
        assert part in text


def test_unreachable_hub_sets_and_restores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with unreachable_hub(tmp_path / "cache") as cache:
        assert cache.is_dir() and os.environ["HF_HUB_CACHE"] == str(cache) and not offline_requested()
        assert hub_online() is False
    assert os.environ["HF_HUB_OFFLINE"] == "1" and "HF_HUB_CACHE" not in os.environ


def test_a_path_is_never_cached(tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub")
    from abduct_modelkit import hub_file_cached

    assert hub_file_cached(str(tmp_path / "missing-model"), "config.json", tmp_path) is None
