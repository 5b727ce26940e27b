"""A damaged kept response (cut short, bytes flipped, a NaN, another format, emptied, a directory
in its place) is one warning naming the file, and the request is sent again: the answer equals
the clean one."""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from abduct.kit.cache import CacheWarning
from abduct_testing.damage import KINDS, damage
from abduct_vlm.served import ChatClient, ResponseCache
from abduct_vlm.testing import FakeOpenAIServer

DAMAGE: dict[str, Callable[[Path], None]] = {
    **{kind: functools.partial(damage, kind=kind) for kind in KINDS},
    "nan": lambda p: p.write_text(p.read_text().replace("{", '{"nan": NaN, ', 1)),
    "other format": lambda p: p.write_text(json.dumps({"choices": []})),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_kept_response_is_said_once_and_asked_again(tmp_path: Path, damage: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "yes or no?"}]}
    with FakeOpenAIServer() as fake:
        def client() -> ChatClient:
            return ChatClient(fake.base_url, api_key=None, timeout=5.0, retries=0,
                              cache=ResponseCache(tmp_path / "cache"))

        first = client()
        clean = first.post(body)
        [kept] = (tmp_path / "cache").rglob("*.json")
        DAMAGE[damage](kept)
        again = client()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            answer = again.post(body)
    said = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(said) == 1 and str(kept) in said[0], said
    assert answer == clean and again.sent == 1 and kept.is_file()  # asked again, and kept whole again
