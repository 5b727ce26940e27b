"""Served throughput: replicas, adaptive concurrency, media grouping and the client's own cost.

Measured in one run against local ``FakeOpenAIServer`` replicas (threads in this process, but
for 4's server, which runs in a process of its own; real HTTP on 127.0.0.1) driven by abduct-vlm's ``ChatClient`` (what ``openai:`` sends with;
no response cache), each figure a ratio of two measurements made here:

1. replicas: requests/s with ``endpoints=`` over 4 replicas of capacity C (each serves C
   requests at once, ``--latency`` seconds each, the rest queue) and 4C in flight, against the
   ideal 4C / latency (goal ≥ 0.9) and against one replica with C in flight (goal ≥ 3.5×);
   the best of ``--rounds`` interleaved rounds (as for 3).
2. auto: requests/s of ``concurrency=auto`` against the best fixed concurrency of a sweep, on
   one server of capacity C that answers 429 beyond it (goal ≥ 0.85×), and its 429s against
   those of a fixed concurrency of 2C (goal: fewer).
3. grouping: requests/s with requests that share an image sent together (``group=media``)
   against the input order (``group=none``), on a workload where 80% of requests reuse an
   image and a request whose image the server was sent last costs 30% less (goal ≥ 1.15×).
4. overhead: the client's own cost against a zero-latency server: wall time of ``post_many``
   over the time of a raw loop (``http.client``, one connection per request as the fake
   server closes each, ``json`` in and out) on the same requests with as many threads, minus 1
   (goal ≤ 10%); each side is the best of ``--repeats`` interleaved rounds, and the raw loop's
   requests/s says what rate the figure was measured at (the goal names 2,000 requests/s). The
   same loop with ``urllib`` (which ``ChatClient`` sent through before, and still does where a
   proxy is configured) shows what the transport alone costs (``overhead_vs_urllib``).

Usage: python benchmarks/served_throughput.py [--latency 0.05] [--capacity 4] [--json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import multiprocessing
import random
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from abduct_vlm.served import ChatClient
from abduct_vlm.testing import FakeOpenAIServer


def client(servers: Sequence[FakeOpenAIServer], concurrency: int, *, adaptive: bool = False,
           group_media: bool = True, endpoints: bool = False) -> ChatClient:
    urls = [s.base_url for s in servers]
    return ChatClient(urls[0], endpoints=urls[1:] if endpoints else (), mirrors=() if endpoints else urls[1:],
                      api_key=None, concurrency=concurrency, adaptive=adaptive, group_media=group_media,
                      retries=100, backoff=0.02, max_backoff=0.2, timeout=30)


def body(i: int, image: int | None = None) -> dict[str, Any]:
    content: Any = f"question {i}"
    if image is not None:  # a small stand-in image: the fake server keys its cache on the bytes sent
        content = [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,aW1hZ2U{image:06d}"}},
                   {"type": "text", "text": content}]
    return {"model": "fake", "messages": [{"role": "user", "content": content}], "max_tokens": 8}


def rate(chat: ChatClient, bodies: list[dict[str, Any]]) -> float:
    """Requests/s of one ``post_many`` over ``bodies``."""
    chat.identity()  # the one probe before a run, not timed
    start = time.perf_counter()
    chat.post_many(bodies)
    return len(bodies) / (time.perf_counter() - start)


def replicas(args: argparse.Namespace) -> dict[str, float]:
    capacity, latency = args.capacity, args.latency
    ideal = 4 * capacity / latency
    servers = [FakeOpenAIServer(latency=latency, capacity=capacity) for _ in range(4)]
    for server in servers:
        server.__enter__()
    try:
        many = one = 0.0
        for _ in range(args.rounds):  # the best of interleaved rounds: a load spike hits one, not the figure
            many = max(many, rate(client(servers, 4 * capacity, endpoints=True),
                                  [body(i) for i in range(args.requests * 4)]))
            one = max(one, rate(client(servers[:1], capacity), [body(i) for i in range(args.requests)]))
    finally:
        for server in servers:
            server.close()
    return {"ideal_rps": ideal, "four_replicas_rps": many, "one_replica_rps": one,
            "vs_ideal": many / ideal, "vs_one_replica": many / one}


def auto(args: argparse.Namespace) -> dict[str, Any]:
    capacity = 2 * args.capacity
    bodies = [body(i) for i in range(args.requests * 2)]

    def run(concurrency: int, adaptive: bool) -> tuple[float, int, ChatClient]:
        with FakeOpenAIServer(latency=args.latency, capacity=capacity, overflow="reject") as server:
            chat = client([server], concurrency, adaptive=adaptive)
            return rate(chat, bodies), server.rejected, chat

    sweep = {n: run(n, False) for n in (capacity // 2, capacity, capacity + capacity // 2, 2 * capacity)}
    best = max(sweep, key=lambda n: sweep[n][0])
    adaptive, rejected, chat = run(args.auto_max, True)
    above = sweep[2 * capacity]
    return {"capacity": capacity, "sweep_rps": {str(n): r[0] for n, r in sweep.items()}, "best_fixed": best,
            "auto_rps": adaptive, "vs_best_fixed": adaptive / sweep[best][0], "auto_429": rejected,
            "fixed_above_capacity_429": above[1], "auto_settled": chat.limiter.limit,
            "auto_highest": chat.limiter.highest}


def grouping(args: argparse.Namespace) -> dict[str, float]:
    n = args.requests * 2
    images = max(1, round(n * (1 - args.reuse)))  # each new image is reused by the rest: 80% reuse
    order = [i % images for i in range(n)]
    random.Random(0).shuffle(order)
    bodies = [body(i, image) for i, image in enumerate(order)]
    found: dict[str, float] = {"input_order_rps": 0.0, "grouped_rps": 0.0}
    for _ in range(args.rounds):
        for name, grouped in (("input_order", False), ("grouped", True)):
            with FakeOpenAIServer(latency=args.latency, capacity=2 * args.capacity, media_saving=args.saving) as server:
                found[f"{name}_rps"] = max(found[f"{name}_rps"],
                                           rate(client([server], 2 * args.capacity, group_media=grouped), bodies))
                found[f"{name}_cache_hits"] = server.media_hits / n
    found["speedup"] = found["grouped_rps"] / found["input_order_rps"]
    return found


def raw_loop(url: str, bodies: list[dict[str, Any]], threads: int, *, library: str = "http.client") -> None:
    """The straightforward client: ``threads`` threads, each POSTing with ``http.client`` (or
    ``urllib``)."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/") + "/chat/completions"
    todo = iter(bodies)
    lock = threading.Lock()
    answers: list[Any] = []

    def work() -> None:
        while True:
            with lock:
                item = next(todo, None)
            if item is None:
                return
            data = json.dumps(item).encode()
            if library == "urllib":
                request = urllib.request.Request(url.rstrip("/") + "/chat/completions", data=data, method="POST",
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=30) as response:
                    answers.append(json.loads(response.read()))
                continue
            connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
            connection.request("POST", path, data, {"Content-Type": "application/json"})
            answers.append(json.loads(connection.getresponse().read()))
            connection.close()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(answers) == len(bodies)


def _serve(urls: Any, stop: Any) -> None:
    """A zero-latency server in a process of its own (the client's threads do not share its GIL)."""
    with FakeOpenAIServer(latency=0.0, capacity=64) as server:
        urls.put(server.base_url)
        stop.wait()


def overhead(args: argparse.Namespace) -> dict[str, float]:
    bodies = [body(i) for i in range(args.overhead_requests)]
    urls: Any = multiprocessing.Queue()
    stop = multiprocessing.Event()
    process = multiprocessing.Process(target=_serve, args=(urls, stop), daemon=True)
    process.start()
    try:
        url = urls.get(timeout=60)
        chat = ChatClient(url, api_key=None, concurrency=args.overhead_threads, timeout=30)
        chat.identity()
        threads = args.overhead_threads
        paths: dict[str, Callable[[], Any]] = {"raw": lambda: raw_loop(url, bodies, threads),
                                               "ours": lambda: chat.post_many(bodies),
                                               "urllib": lambda: raw_loop(url, bodies, threads, library="urllib")}
        best = {name: float("inf") for name in paths}
        for _ in range(args.repeats):
            for name, fn in paths.items():
                start = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - start)
    finally:
        stop.set()
        process.join(timeout=10)
    n = len(bodies)
    return {"raw_rps": n / best["raw"], "ours_rps": n / best["ours"], "overhead": best["ours"] / best["raw"] - 1,
            "us_per_request_beyond_raw": (best["ours"] - best["raw"]) / n * 1e6, "urllib_rps": n / best["urllib"],
            "overhead_vs_urllib": best["ours"] / best["urllib"] - 1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request at the fake servers")
    parser.add_argument("--capacity", type=int, default=4, help="C: requests one replica serves at once")
    parser.add_argument("--requests", type=int, default=120, help="requests per one-replica measurement")
    parser.add_argument("--auto-max", type=int, default=64)
    parser.add_argument("--reuse", type=float, default=0.8, help="share of requests reusing an image")
    parser.add_argument("--saving", type=float, default=0.3, help="share of latency a media cache hit saves")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds of the replica and grouping figures")
    parser.add_argument("--overhead-requests", type=int, default=1000)
    parser.add_argument("--overhead-threads", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds of the overhead figure")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.getLogger("abduct_vlm").setLevel(logging.WARNING)
    started = time.perf_counter()
    results = {"replicas": replicas(args), "auto": auto(args), "grouping": grouping(args), "overhead": overhead(args)}
    results["seconds"] = time.perf_counter() - started
    if args.json:
        print(json.dumps(results, indent=2))
        return
    r, a, g, o = results["replicas"], results["auto"], results["grouping"], results["overhead"]
    print(f"replicas: 4 x capacity {args.capacity} at {args.latency * 1000:.0f} ms: {r['four_replicas_rps']:.1f} req/s "
          f"= {r['vs_ideal']:.2f} x ideal {r['ideal_rps']:.0f} (goal >= 0.9), {r['vs_one_replica']:.2f} x one replica "
          f"{r['one_replica_rps']:.1f} req/s (goal >= 3.5)")
    sweep = ", ".join(f"{n}: {v:.1f}" for n, v in a["sweep_rps"].items())
    print(f"auto: capacity {a['capacity']}, fixed sweep req/s {{{sweep}}}; auto {a['auto_rps']:.1f} req/s = "
          f"{a['vs_best_fixed']:.2f} x best fixed ({a['best_fixed']}) (goal >= 0.85); settled on {a['auto_settled']} "
          f"(highest {a['auto_highest']}); 429s: auto {a['auto_429']}, fixed {2 * a['capacity']} {a['fixed_above_capacity_429']}")
    print(f"grouping: {g['grouped_rps']:.1f} vs {g['input_order_rps']:.1f} req/s = {g['speedup']:.2f}x (goal >= 1.15); "
          f"cache hits {g['grouped_cache_hits']:.0%} vs {g['input_order_cache_hits']:.0%}")
    print(f"overhead: ours {o['ours_rps']:.0f} req/s vs raw http.client {o['raw_rps']:.0f} req/s: "
          f"{o['overhead']:+.1%} ({o['us_per_request_beyond_raw']:.0f} us per request; goal <= 10%); vs the same loop "
          f"with urllib ({o['urllib_rps']:.0f} req/s): {o['overhead_vs_urllib']:+.1%}")
    print(f"{results['seconds']:.1f} s in all")


if __name__ == "__main__":
    main()
