"""Property: whatever whole reply a server sends (``abduct.testing.fuzzing.http_replies``), the
real client against ``FakeOpenAIServer`` retries it or ends in one ``ServedError`` line; it
never raises anything else, never waits a non-finite or uncapped time, and never caches a
non-finite number."""

from __future__ import annotations

import itertools
import math
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abduct.testing.fuzzing import finite_json_problem, http_replies
from abduct.testing.profiles import examples
from abduct_vlm.served import ChatClient, ResponseCache, ServedError, answer_logprob, reply_text
from abduct_vlm.testing import FakeOpenAIServer

MAX_BACKOFF = 0.01


def test_any_reply_is_retried_or_one_line_and_nothing_non_finite_is_cached(tmp_path: Path) -> None:
    numbers = itertools.count()
    with FakeOpenAIServer() as fake:
        valid = fake.completion({"messages": [{"content": "yes or no?"}], "logprobs": True, "top_logprobs": 2})
        cache = ResponseCache(tmp_path / "cache")

        @settings(max_examples=examples(40), deadline=timedelta(seconds=5), database=None,
                  suppress_health_check=[HealthCheck.too_slow])
        @given(st.lists(http_replies(valid), min_size=1, max_size=2), st.booleans())
        def check(replies: list[bytes], logprobs: bool) -> None:
            fake.raw.clear()
            fake.raw.extend(replies)  # the retry (there is one) gets the second, or a good answer
            waits: list[float] = []
            client = ChatClient(fake.base_url, api_key=None, timeout=1.0, retries=1, backoff=0.0,
                                max_backoff=MAX_BACKOFF, cache=cache, sleep=waits.append)
            body = {"model": "m", "messages": [{"role": "user", "content": f"yes or no? {next(numbers)}"}],
                    "logprobs": logprobs}
            try:
                response = client.post(body)
                text = reply_text(response, client.url)
                assert isinstance(text, str)
                if logprobs:
                    assert math.isfinite(answer_logprob(response, "yes", client.url))
            except ServedError as exc:
                assert "\n" not in str(exc) and client.url in str(exc), str(exc)
            assert all(0.0 <= w <= MAX_BACKOFF for w in waits), waits  # nan, -1, huge Retry-After: capped
            assert client.sent <= 2

        check()
    kept = list((tmp_path / "cache").rglob("*.json"))
    assert kept, "no reply was ever accepted: the property checked only refusals"
    for file in kept:
        assert finite_json_problem(file.read_text(encoding="utf-8")) is None, file
