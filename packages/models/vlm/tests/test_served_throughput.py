"""``openai:`` throughput against local fake servers: requests spread over replicas
(``endpoints=``, one killed mid-run), ``concurrency=auto`` growing and backing off on 429, and
requests that share images sent together without changing any result."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from abduct import AbductError, Box, Decoding, GenerationRequest, Region, Settings, VisualInput
from abduct.host import build_registry, load_model
from abduct_testing import make_images
from abduct_vlm.replicas import START, Limiter, Replicas, media_order
from abduct_vlm.served import ChatClient, ServedModel
from abduct_vlm.testing import FakeOpenAIServer, default_reply

FAST = "backoff=0.01,max_backoff=0.05,timeout=2,cache=false"


def served(options: str) -> ServedModel:
    model: ServedModel = load_model(f"openai:fake,{FAST},{options}", Settings(), build_registry()).model
    return model


def questions(tmp_path: Path, n: int, images: int) -> list[GenerationRequest]:
    """``n`` 1-or-2 questions over ``images`` images (each image asked about several times)."""
    paths = make_images(tmp_path / "images", images, size=(16, 16))
    return [GenerationRequest(VisualInput(str(paths[i % images]), Region((Box(1, 1, 8, 8),)), context=f"clue {i}"),
                              "Answer with 1 or 2 only.") for i in range(n)]


def test_one_of_three_replicas_killed_mid_run_changes_no_result_and_answers_each_once(tmp_path: Path) -> None:
    requests = questions(tmp_path, 36, 12)
    with FakeOpenAIServer(latency=0.01) as alone:
        expected = served(f"base_url={alone.base_url}").generate(requests, Decoding(), None)
    answered = 0

    def reply_then_die(body: dict[str, Any]) -> str:
        nonlocal answered
        answered += 1
        if answered == 4:  # the fourth answer goes out; the replica dies behind it
            threading.Thread(target=victim.kill).start()
        return default_reply(body)

    with FakeOpenAIServer(latency=0.02) as first, FakeOpenAIServer(latency=0.02, reply=reply_then_die) as victim, \
            FakeOpenAIServer(latency=0.02) as third:
        model = served(f'endpoints="{first.base_url}|{victim.base_url}|{third.base_url}",concurrency=6')
        texts = model.generate(requests, Decoding(), None)
        replicas = model.client.replicas
        assert replicas is not None
        spread = replicas.describe()
    assert victim.dead and 4 <= victim.served < 12  # it was killed mid-run, not before it answered
    assert spread[1]["failed"] >= 1 and spread[1]["drained"] >= 1  # its requests went elsewhere
    assert texts == expected  # nothing lost, nothing changed
    assert first.served + victim.served + third.served == len(requests)  # each answered exactly once
    assert model.usage["requests"] == len(requests) and sum(s["answered"] for s in spread) == len(requests)
    inputs = model.describe_inputs()["served"]
    assert inputs["endpoints"] == 3 and inputs["mirrors"] == 0 and inputs["concurrency"] == 6


def test_least_outstanding_first_spreads_the_load_and_avoids_a_slow_replica(tmp_path: Path) -> None:
    requests = questions(tmp_path, 40, 40)
    with FakeOpenAIServer(latency=0.01) as fast, FakeOpenAIServer(latency=0.01) as also_fast, \
            FakeOpenAIServer(latency=0.25) as slow:
        model = served(f"base_url={fast.base_url},endpoints={also_fast.base_url}|{slow.base_url},concurrency=4")
        model.generate(requests, Decoding(), None)
    assert fast.served >= 10 and also_fast.served >= 10
    assert slow.served <= 8  # each of its requests keeps it the busiest for 25 of the others' answers


def test_a_replica_draining_and_probing_again() -> None:
    now = [0.0]
    replicas = Replicas(2, drain=1.0, clock=lambda: now[0])
    first = replicas.acquire()
    replicas.release(first, failed=True)  # drained for 1 s
    assert [replicas.acquire() for _ in range(3)] == [1, 1, 1]
    now[0] = 1.5  # back: the least outstanding again
    assert replicas.acquire() == 0
    assert replicas.acquire(avoid=[0, 1]) in (0, 1)  # nothing left to avoid with: still an answer


def limited(server: FakeOpenAIServer, concurrency: str) -> ChatClient:
    model = served(f"base_url={server.base_url},concurrency={concurrency},retries=100")
    return model.client


def bodies(n: int) -> list[dict[str, Any]]:
    return [{"model": "fake", "messages": [{"role": "user", "content": f"question {i}"}]} for i in range(n)]


def test_auto_concurrency_grows_while_the_server_keeps_up() -> None:
    with FakeOpenAIServer(latency=0.02, capacity=12, overflow="reject") as server:
        client = limited(server, "auto:32")
        client.post_many(bodies(240))
    assert client.limiter.highest >= 2 * START  # grew from 4, one per window (to 12 on a quiet machine)
    assert server.served == 240 and server.peak <= 12


def test_auto_concurrency_backs_off_on_429_and_settles_near_capacity() -> None:
    with FakeOpenAIServer(latency=0.02, capacity=3, overflow="reject") as server:
        client = limited(server, "auto:32")
        client.post_many(bodies(150))
    limiter = client.limiter
    assert server.served == 150 and server.rejected >= 1  # it probed above capacity ...
    assert limiter.backoffs >= 1 and limiter.limit <= 4  # ... backed off, and settled near it
    assert server.rejected < 40  # held below the limit that overflowed, not hammering
    with FakeOpenAIServer(latency=0.02, capacity=3, overflow="reject") as server:
        fixed = limited(server, "12")
        fixed.post_many(bodies(150))
    assert server.rejected > 40  # a fixed limit above capacity keeps overflowing


def test_the_limiter_backs_off_once_per_window() -> None:
    limiter = Limiter(32, adaptive=True)
    limiter.limit = 10
    limiter.congested()
    limiter.congested()  # the same window's other 429s: no second back-off
    assert limiter.limit == 7 and limiter.backoffs == 1
    assert Limiter(5).describe() == {"concurrency": 5} and Limiter(5).limit == 5


def test_auto_concurrency_is_recorded_and_bad_values_are_one_line() -> None:
    with FakeOpenAIServer() as server:
        model = served(f"base_url={server.base_url},concurrency=auto:16")
        model.client.post_many(bodies(20))
        facts = model.describe_inputs()["served"]
        assert facts["concurrency"] == "auto" and facts["concurrency_max"] == 16
        assert 1 <= facts["concurrency_settled"] <= 16 and facts["concurrency_backoffs"] == 0
        assert served(f"base_url={server.base_url},concurrency=auto").client.limiter.maximum == 64
        for bad in ("0", "auto:0", "many", "auto:x", "autox"):
            with pytest.raises(AbductError, match=rf"^openai:fake: option 'concurrency' must be a positive integer, auto or auto:MAX, not '{bad}'"):
                served(f"base_url={server.base_url},concurrency={bad}")
        with pytest.raises(AbductError, match="give mirrors= .* or endpoints= .*, not both"):
            served(f"base_url={server.base_url},mirrors={server.base_url},endpoints={server.base_url}")
        with pytest.raises(AbductError, match="endpoints 'ftp://x' is not an http"):
            served('endpoints="ftp://x"')


def test_requests_sharing_images_go_together_and_nothing_changes(tmp_path: Path) -> None:
    paths = make_images(tmp_path, 3, size=(16, 16))
    which = [0, 1, 0, 2, 1, 0]
    requests = [GenerationRequest(VisualInput(str(paths[w])), f"Answer with 1 or 2 only. ({i})")
                for i, w in enumerate(which)]
    with FakeOpenAIServer() as server:
        model = served(f"base_url={server.base_url},concurrency=1")
        grouped = model.generate(requests, Decoding(), None)
        sent = [body["messages"][0]["content"][-1]["text"][-2] for body in server.requests]
        server.requests.clear()
        plain = served(f"base_url={server.base_url},concurrency=1,group=none").generate(requests, Decoding(), None)
        sent_plain = [body["messages"][0]["content"][-1]["text"][-2] for body in server.requests]
    assert sent == ["0", "2", "5", "1", "4", "3"]  # image 0's three, image 1's two, image 2's one
    assert sent_plain == ["0", "1", "2", "3", "4", "5"]
    assert grouped == plain  # results back in the input order, none changed
    assert model.describe_inputs()["served"]["grouping"] == {"by": "media", "groups": 3, "shared": 5}


def test_media_order_keeps_requests_without_media_in_place() -> None:
    order, facts = media_order(["a", None, "b", "a", None])
    assert order == [0, 3, 1, 2, 4] and facts == {"groups": 2, "shared": 2}


def test_a_replica_that_saw_the_images_last_gets_their_next_request() -> None:
    replicas = Replicas(3)
    assert replicas.acquire("x") == 0
    assert replicas.acquire("y") == 1
    assert replicas.acquire("x") == 0  # one busier than the least: its caches are worth it
    assert replicas.acquire("x") == 2  # two busier: spread


def test_a_replica_answering_far_slower_is_drained() -> None:
    now = [0.0]
    replicas = Replicas(2, drain=1.0, clock=lambda: now[0])
    for _ in range(8):  # two requests at a time, one on each
        held = [replicas.acquire(), replicas.acquire()]
        for index in held:
            replicas.release(index, 0.01 if index == 0 else 0.1)
    assert replicas.describe()[1]["drained"] == 1  # 10 times slower than the other: no new request for 1 s
    assert {replicas.acquire() for _ in range(4)} == {0}


def test_the_fake_servers_media_cache_rewards_the_images_it_saw_last() -> None:
    def with_image(i: int, image: int) -> dict[str, Any]:
        return {"model": "fake", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{image}"}},
            {"type": "text", "text": f"q {i}"}]}]}

    with FakeOpenAIServer(media_saving=0.3) as server:
        chat = ChatClient(server.base_url, api_key=None, concurrency=1)
        chat.post_many([with_image(i, i % 2) for i in range(6)])  # sent grouped: 0 0 0, then 1 1 1
        assert server.media_hits == 4
        ChatClient(server.base_url, api_key=None, concurrency=1, group_media=False).post_many(
            [with_image(i, i % 2) for i in range(6)])  # alternating: no hit
        assert server.media_hits == 4
