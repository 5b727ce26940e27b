"""Property: whatever whole reply a server sends (``http_replies``, below), the
real client against ``FakeOpenAIServer`` retries it or ends in one ``ServedError`` line; it
never raises anything else, never waits a non-finite or uncapped time, and never caches a
non-finite number."""

from __future__ import annotations

import itertools
import json
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abduct_testing.fuzzing import finite_json_problem, mutated_json
from abduct_testing.profiles import examples
from abduct_vlm.served import ChatClient, ResponseCache, ServedError, answer_logprob, reply_text
from abduct_vlm.testing import FakeOpenAIServer

MAX_BACKOFF = 0.01

# -- whole HTTP replies of a broken or hostile server -----------------------------------------
HOSTILE_RETRY_AFTER = ("nan", "-1", "inf", "-inf", "1e400", "0", "0.01", "", "99999999", "Wed, 21 Oct 2015 07:28:00 GMT",
                       "1; drop", "\u00e9")
HTTP_STATUSES = (200, 200, 200, 200, 201, 204, 301, 400, 401, 404, 408, 413, 429, 500, 503, 599, 600, 999)


def http_replies(valid_body: Any) -> Any:
    """A hypothesis strategy of whole HTTP replies (bytes) a broken or hostile server could send
    for a request whose good answer is the JSON document ``valid_body``: any status (odd ones
    too), a Retry-After that is NaN, negative, huge or a date, a Content-Length that is absent,
    short, long, negative or text, a body that is ``valid_body`` mutated (NaN, Infinity and
    1e400 included, see ``mutated_json``) or stray bytes, and now and then a status line that
    is not HTTP at all."""
    bodies = st.one_of(mutated_json(valid_body), mutated_json(valid_body), st.binary(max_size=64),
                       st.just(json.dumps(valid_body).encode()))

    @st.composite
    def reply(draw: Any) -> bytes:
        body: bytes = draw(bodies)
        status = draw(st.sampled_from(HTTP_STATUSES))
        version = draw(st.sampled_from(["HTTP/1.1"] * 6 + ["HTTP/1.0", "HTTP/9.9", "\x00\x01 not HTTP"]))
        headers = [("Content-Type", draw(st.sampled_from(["application/json", "text/html", "", "application/json; charset=latin-1"])))]
        length = draw(st.sampled_from(["exact"] * 4 + ["absent", "short", "long", "-1", "text", "huge", "twice"]))
        lengths = {"exact": [str(len(body))], "absent": [], "short": [str(max(0, len(body) - 5))],
                   "long": [str(len(body) + 50)], "-1": ["-1"], "text": ["twelve"], "huge": [str(2**70)],
                   "twice": [str(len(body)), str(len(body) + 1)]}[length]
        headers += [("Content-Length", value) for value in lengths]
        if draw(st.booleans()):
            headers.append(("Retry-After", draw(st.sampled_from(HOSTILE_RETRY_AFTER))))
        head = f"{version} {status} {draw(st.sampled_from(['OK', 'Error', '']))}\r\n"
        head += "".join(f"{key}: {value}\r\n" for key, value in headers)
        return head.encode("utf-8") + b"\r\n" + body

    return reply()


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
