"""How a served model's requests reach the server: spread over replicas (``endpoints=``), as
many in flight as the server takes (``concurrency=auto[:MAX]``), and those that share an image
sent together. Standard library only; ``abduct_vlm.served.ChatClient`` uses all three.

- ``Replicas``: each request goes to the replica with the fewest requests outstanding (ties:
  the one answering fastest lately; a request whose image a replica was sent last goes there
  while it is at most one request busier, so its caches hit). A replica that fails (refused
  connection, 5xx, timeout) or answers ``SLOW`` times slower than the fastest other one is
  drained: it gets no new request for ``drain`` seconds (doubled at each failure in a row, at
  most ``max_drain``), then one request probes it. Failing over never sends a request that was
  answered again, so no result is lost or duplicated.
- ``Limiter``: how many requests are in flight. Fixed, or adaptive: it starts at ``START`` and
  adds one per window (as many answers as the limit) while the window's mean latency stays
  within ``QUEUEING`` × the lowest seen (the server is not queueing them, so throughput grows);
  a window that queues takes one away; a 429, 503 or timeout multiplies it by ``BETA`` (once per
  window) and it then stays below the limit that overflowed for ``HOLD`` windows before probing
  above it again.
- ``media_order``: a sending order where requests that share their images are consecutive
  (groups in order of first appearance, each in its own order); results keep the input order.
"""

from __future__ import annotations

import functools
import hashlib
import http.client
import logging
import math
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger(__name__)

START = 4  # requests in flight an adaptive limit starts with
BETA = 0.7  # multiplicative back-off on a 429, 503 or timeout
QUEUEING = 1.5  # a window whose mean latency is this many times the lowest seen is queueing
HOLD = 16  # windows spent below a limit that overflowed before probing above it again
MIN_WINDOW = 8  # answers in a window, at least: fewer are too noisy to compare
SLOW = 4.0  # a replica this many times slower than the fastest other one is drained
AFFINITY = 1  # how many more outstanding requests a replica may have and still get its media


def media_key(body: dict[str, Any]) -> str | None:
    """A digest of the images a chat body sends (None: it sends none)."""
    digest = hashlib.sha1(usedforsecurity=False)
    found = False
    for message in body.get("messages", ()):
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and part.get("type") == "image_url":
                url = part.get("image_url")
                digest.update(str(url.get("url") if isinstance(url, dict) else url).encode())
                digest.update(b"\x00")
                found = True
    return digest.hexdigest() if found else None


def media_order(keys: Sequence[str | None]) -> tuple[list[int], dict[str, int]]:
    """The sending order grouping equal keys (groups by first appearance, stable inside), and what
    it did: ``groups`` (distinct media), ``shared`` (requests whose media another request sends too)."""
    groups: dict[object, list[int]] = {}
    for index, key in enumerate(keys):
        groups.setdefault(key if key is not None else ("alone", index), []).append(index)
    order = [index for members in groups.values() for index in members]
    with_media = [members for key, members in groups.items() if isinstance(key, str)]
    return order, {"groups": len(with_media), "shared": sum(len(m) for m in with_media if len(m) > 1)}


class Replicas:
    """Least-outstanding dispatch over replicas, draining failing and slow ones (module docstring)."""

    def __init__(self, count: int, *, drain: float = 2.0, max_drain: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.count = count
        self.drain = drain
        self.max_drain = max_drain
        self.clock = clock
        self.outstanding = [0] * count
        self.answered = [0] * count
        self.failed = [0] * count
        self.drained = [0] * count  # times each was drained
        self._until = [0.0] * count  # drained until
        self._streak = [0] * count  # failures in a row
        self._latency: list[float | None] = [None] * count  # moving average of answered requests' seconds
        self._samples = [0] * count
        self._media: list[str | None] = [None] * count  # the media each was sent last
        self._lock = threading.Lock()

    def acquire(self, media: str | None = None, avoid: Sequence[int] = ()) -> int:
        """The replica for the next request (counted outstanding until ``release``); ``avoid``: the
        ones this request already failed on, used only when nothing else is left."""
        with self._lock:
            now = self.clock()
            everyone = range(self.count)
            healthy = [i for i in everyone if self._until[i] <= now and i not in avoid]
            if not healthy:  # all drained: the one back soonest, among those not failed for this request
                pool = [i for i in everyone if i not in avoid] or list(everyone)
                healthy = [min(pool, key=lambda i: self._until[i])]
            least = min(self.outstanding[i] for i in healthy)
            seen = [i for i in healthy if media is not None and self._media[i] == media
                    and self.outstanding[i] <= least + AFFINITY]
            choice = seen[0] if seen else min(healthy, key=lambda i: (self.outstanding[i], self._latency[i] or 0.0, i))
            self.outstanding[choice] += 1
            self._media[choice] = media
            return choice

    def release(self, index: int, seconds: float | None = None, *, failed: bool = False) -> None:
        """A request on ``index`` ended: answered in ``seconds``, or ``failed`` in a way worth retrying
        (the replica is drained), or neither (refused: the request's fault, not the replica's)."""
        with self._lock:
            self.outstanding[index] -= 1
            now = self.clock()
            if failed:
                self.failed[index] += 1
                self._streak[index] += 1
                self._drain(index, now, min(self.drain * 2 ** (self._streak[index] - 1), self.max_drain))
                return
            if seconds is None:
                return
            self.answered[index] += 1
            self._streak[index] = 0
            last = self._latency[index]
            mean = seconds if last is None else 0.8 * last + 0.2 * seconds
            self._latency[index] = mean
            self._samples[index] += 1
            others = [lat for i, lat in enumerate(self._latency) if i != index and lat is not None
                      and self._until[i] <= now and self._samples[i] >= MIN_WINDOW]
            if self._samples[index] >= MIN_WINDOW and others and mean > SLOW * max(min(others), 1e-3):
                self._drain(index, now, self.drain)

    def _drain(self, index: int, now: float, seconds: float) -> None:
        self._until[index] = now + seconds
        self._latency[index], self._samples[index] = None, 0  # judged afresh when it is back
        self.drained[index] += 1

    def describe(self) -> list[dict[str, int]]:
        with self._lock:
            return [{"answered": a, "failed": f, "drained": d} for a, f, d in zip(self.answered, self.failed, self.drained)]


class Limiter:
    """How many requests may be in flight: ``maximum`` always, or adapting up to it (module docstring).
    Requests wait in the order they ask (one thread submits), so a sending order is kept."""

    def __init__(self, maximum: int, *, adaptive: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        self.maximum = max(1, maximum)
        self.adaptive = adaptive
        self.clock = clock
        self.limit = min(START, self.maximum) if adaptive else self.maximum
        self.highest = self.limit
        self.backoffs = 0
        self._in_flight = 0
        self._cond = threading.Condition()
        self._window_start = clock()
        self._window: list[float] = []
        self._lowest: float | None = None
        self._ceiling: int | None = None
        self._hold = 0
        self._since_backoff = math.inf  # requests answered since the last back-off
        self._said: int | None = None  # the limit last logged

    def acquire(self) -> None:
        with self._cond:
            while self._in_flight >= self.limit:
                self._cond.wait()
            self._in_flight += 1

    def release(self) -> None:
        with self._cond:
            self._in_flight -= 1
            self._cond.notify()

    def congested(self) -> None:
        """A 429, 503 or timeout: back off, once for all the requests of one window."""
        if not self.adaptive:
            return
        with self._cond:
            if self._since_backoff < self.limit:
                return
            self._ceiling = self.limit
            self.limit = max(1, math.floor(self.limit * BETA))
            self._hold = HOLD
            self.backoffs += 1
            self._since_backoff = 0
            self._window = []

    def answered(self, seconds: float) -> None:
        if not self.adaptive:
            return
        with self._cond:
            self._since_backoff += 1
            self._window.append(seconds)
            if len(self._window) < max(self.limit, MIN_WINDOW):
                return
            mean = sum(self._window) / len(self._window)
            self._window = []
            self._lowest = mean if self._lowest is None else min(self._lowest, mean)
            if mean > QUEUEING * self._lowest and self.limit > 1:
                self.limit -= 1  # queued at the server: more in flight would not answer faster
            elif self._ceiling is not None and self.limit + 1 >= self._ceiling and self._hold > 0:
                self._hold -= 1  # just below the limit that overflowed
            elif self.limit < self.maximum:
                self.limit += 1
                self._cond.notify()
            self.highest = max(self.highest, self.limit)

    def describe(self) -> dict[str, Any]:
        if not self.adaptive:
            return {"concurrency": self.maximum}
        return {"concurrency": "auto", "concurrency_max": self.maximum, "concurrency_settled": self.limit,
                "concurrency_highest": self.highest, "concurrency_backoffs": self.backoffs}

    def settled(self) -> None:
        """Log the limit at the end of a batch of requests, when it moved since the last said."""
        if self.adaptive and self.limit != self._said:
            self._said = self.limit
            log.info("concurrency=auto settled on %d requests in flight (highest %d, max %d, %d back-offs)",
                     self.limit, self.highest, self.maximum, self.backoffs)


@functools.cache
def _proxies() -> bool:
    return bool(urllib.request.getproxies())  # reads every environment variable: too slow per request


def open_post(url: str, data: bytes, headers: dict[str, str], timeout: float) -> Any:
    """POST ``data`` and return the open ``http.client.HTTPResponse`` (read it, then close it),
    raising as ``urllib.request.urlopen`` does: ``urllib.error.HTTPError`` for a status outside
    2xx (redirects are not followed), ``OSError``/``TimeoutError`` when the server cannot be
    reached. Straight through ``http.client``, one connection per request: urllib's handler chain
    costs about 15% of the throughput against a fast server (benchmarks/served_throughput.py);
    urllib itself where an HTTP proxy is configured (read once), which it knows how to use."""
    if _proxies():
        request = urllib.request.Request(url, data=data, headers=headers, method="POST")
        return urllib.request.urlopen(request, timeout=timeout)
    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname or "", parts.port, timeout=timeout)
    try:  # "close": the server ends the connection, so closing the response frees everything
        connection.request("POST", parts.path + (f"?{parts.query}" if parts.query else ""), data,
                           {**headers, "Connection": "close"})
        response = connection.getresponse()
    except BaseException:
        connection.close()
        raise
    if not 200 <= response.status < 300:
        raise urllib.error.HTTPError(url, response.status, response.reason, response.headers, response)
    return response
