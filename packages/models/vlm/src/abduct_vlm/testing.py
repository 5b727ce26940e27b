"""``FakeOpenAIServer``: a local OpenAI-compatible chat-completions endpoint for tests and
benchmarks (standard library ``http.server`` in a thread).

It answers deterministically from the request's text (``default_reply``: "1"/"2" to a question
that asks for 1 or 2, "Yes"/"No" to a yes-or-no question, else a short fixed text), returns
log-probabilities when asked, waits ``latency`` seconds per request, serves at most
``capacity`` requests at once (the rest queue), and misbehaves on purpose: each name queued in
``faults`` spoils one request, in order —

- ``"refuse"``: HTTP 401 with an error message (not retried by clients);
- ``"rate_limit"``: HTTP 429 with ``Retry-After: 0``;
- ``"server_error"``: HTTP 500;
- ``"invalid_json"``: HTTP 200 whose body is not JSON;
- ``"timeout"``: no answer for ``hang`` seconds (longer than the client's timeout);
- ``"truncated"``: a 200 whose body stops short of its Content-Length;
- ``"not_http"``: bytes that are not an HTTP response;
- ``"reset"``: the connection dropped without a reply;
- ``"bad_retry_after"``: HTTP 429 with ``Retry-After: nan``;
- ``"nan_logprob"``: a 200 whose JSON holds ``NaN`` (as some servers write it);
- ``"slow_drip"``: a 200 whose body comes one byte every ``hang / 20`` seconds;
- ``"oversized"``: a 200 announcing (Content-Length) a body one byte over the client's cap
  (``abduct_vlm.served.MAX_BODY``) and streaming it until the client hangs up;
- ``"oversized_stream"``: the same body without a length (it ends when the connection
  closes), so only counting the bytes can stop it.

``reply(body)`` gives the answer's text, or the message's fields as a dict (``content``,
``reasoning_content`` as a reasoning parser returns it, ``finish_reason``: "length" for a reply
cut at the token limit). ``raw`` queues whole replies, bytes written as they are (status line, headers, body: anything a
broken or hostile server could send), one per request before any fault; the property tests
draw them from ``http_replies`` (abduct-vlm's tests/test_served_properties.py). ``always`` makes one fault permanent.
``requests`` holds every body received, ``served`` the number answered normally, ``peak`` the most requests in flight at once.
Each normal answer carries a ``usage`` counted in words (``token_usage``; ``usage=False``: none), added up in ``tokens``.
For throughput (``benchmarks/served_throughput.py``): ``overflow="reject"`` answers 429 (no
Retry-After) to a request beyond ``capacity`` instead of queueing it (counted in ``rejected``);
``media_saving`` is the share of ``latency`` saved by a request sending the same images as the
one this server was sent last (its caches hit; counted in ``media_hits``); ``kill()`` makes it
die as a crashed replica does (new connections refused, requests in flight dropped unanswered).
It reports ``model_id`` as its model (default: the request's) and, when set, a ``system_fingerprint``;
both may be changed while it runs, as a redeployed server's change. ``GET /v1/models`` lists
``model_id`` (nothing while it is None) with ``root``, the weights it serves as vLLM names them
(``created`` is the time asked, as vLLM gives it); ``models_status`` makes that route answer
with this HTTP status and an error message instead (401, 500, 501, ...); ``probes`` counts the GETs.
The client's probe chat request (``abduct_vlm.served.PROBE``: one "ping", ``max_tokens=1``) is
answered "pong" with the model id and fingerprint as any answer (``ping_status``: with this HTTP status and an error message instead), never
spoiled by ``faults`` or ``raw`` (they are meant for the run's requests), and kept apart: counted
in ``pings`` and ``ping_tokens``, not in ``requests``, ``served`` or ``tokens``.

    with FakeOpenAIServer(latency=0.05) as server:
        spec = f"openai:fake,base_url={server.base_url}"
"""

from __future__ import annotations

import hashlib
import json
import math
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = ("refuse", "rate_limit", "server_error", "invalid_json", "timeout", "truncated", "not_http", "reset",
          "bad_retry_after", "nan_logprob", "slow_drip", "oversized", "oversized_stream")
STREAMED = ("truncated", "not_http", "reset", "slow_drip", "oversized", "oversized_stream")


def request_text(body: dict[str, Any]) -> str:
    """The text parts of a chat body's messages, joined."""
    texts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(texts)


def image_count(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages", []) if isinstance(m.get("content"), list)
               for p in m["content"] if isinstance(p, dict) and p.get("type") == "image_url")


def _parity(body: dict[str, Any]) -> int:
    return hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).digest()[0] % 2


def _words(text: object) -> int:
    return len(text.split()) if isinstance(text, str) else 0


def token_usage(body: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    """A deterministic ``usage``: prompt tokens are the request's words plus one per image;
    completion tokens the reply's words, reasoning (``reasoning_content`` and a ``<think>`` block)
    included, as the OpenAI API counts them."""
    content = str(message.get("content") or "").replace("<think>", " ").replace("</think>", " </think> ")
    thought = content.split("</think>")[0] if "</think>" in content else ""
    reasoning = _words(message.get("reasoning_content")) + _words(thought)
    completion = _words(content.replace("</think>", " ")) + _words(message.get("reasoning_content"))
    prompt = _words(request_text(body)) + image_count(body)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "completion_tokens_details": {"reasoning_tokens": reasoning}}


def default_reply(body: dict[str, Any]) -> str:
    text = request_text(body).lower()
    if "1 or 2" in text:
        return "1" if _parity(body) == 0 else "2"
    if "yes or no" in text:
        return "Yes" if _parity(body) == 0 else "No"
    return f"a reply about {len(text.split())} words and {image_count(body)} images"


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many clients connecting at once are queued, not refused
    daemon_threads = True


class FakeOpenAIServer:
    def __init__(self, *, latency: float = 0.0, capacity: int = 64, reply: Callable[[dict[str, Any]], str | dict[str, Any]] = default_reply,
                 faults: list[str] | tuple[str, ...] = (), always: str | None = None, hang: float = 5.0,
                 usage: bool = True, model_id: str | None = None, system_fingerprint: str | None = None,
                 root: str | None = None, models_status: int | None = None, ping_status: int | None = None,
                 overflow: str = "queue", media_saving: float = 0.0) -> None:
        for fault in (*faults, *([always] if always else [])):
            if fault not in FAULTS:
                raise ValueError(f"unknown fault {fault!r} (known: {', '.join(FAULTS)})")
        self.latency = latency
        self.reply = reply
        self.faults: deque[str] = deque(faults)
        self.raw: deque[bytes] = deque()
        self.always = always
        self.hang = hang
        self.requests: list[dict[str, Any]] = []
        self.served = 0
        self.usage = usage
        self.model_id = model_id  # the model id responses report (None: the request's); change it to "redeploy"
        self.system_fingerprint = system_fingerprint  # reported when set, as vLLM and hosted APIs do
        self.tokens = {"prompt": 0, "completion": 0, "reasoning": 0}  # what the normal answers' usage says
        self.root = root  # the weights behind model_id in /models (vLLM's ``root``); change it to "redeploy"
        self.models_status = models_status  # GET /models answers this error status when set
        self.probes = 0  # GET requests received
        self.ping_status = ping_status  # the probe's chat request answers this error status when set
        self.pings = 0  # the client's probe chat requests received (not in ``requests``)
        self.ping_tokens = {"prompt": 0, "completion": 0}  # what their usage says (not in ``tokens``)
        self.peak = 0
        self.overflow = overflow  # "queue" or "reject" (429) beyond capacity
        self.rejected = 0
        self.media_saving = media_saving
        self.media_hits = 0
        self._last_media: str | None = None
        self.dead = False
        self._in_flight = 0
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max(1, capacity))
        self._server = _Server(("127.0.0.1", 0), self._handler())
        # shutdown() waits for the serving loop's next poll: 0.5 s by default, at the end of every test
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def kill(self) -> None:
        """Die as a crashed replica does: refuse new connections, drop the requests in flight unanswered."""
        self.dead = True
        self.close()

    def _cost(self, body: dict[str, Any]) -> float:
        """``latency``, less ``media_saving`` of it when this server was sent the same images last."""
        from abduct_vlm.replicas import media_key

        media = media_key(body) if self.media_saving else None
        with self._lock:
            hit = media is not None and media == self._last_media
            self._last_media = media
            self.media_hits += hit
        return self.latency * (1.0 - self.media_saving) if hit else self.latency

    def _next_fault(self) -> str | None:
        with self._lock:
            if self.faults:
                return self.faults.popleft()
        return self.always

    def completion(self, body: dict[str, Any], made: str | dict[str, Any] | None = None) -> dict[str, Any]:
        made = self.reply(body) if made is None else made
        # a reply function may give the message's fields itself (content, reasoning_content, finish_reason)
        message = dict(made) if isinstance(made, dict) else {"content": made}
        finish = message.pop("finish_reason", "stop")
        text = message.get("content") or ""
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        if body.get("logprobs"):
            yes = -0.1 - 2.0 * (_parity(body) + len(request_text(body)) % 7 / 7.0)
            tops = [{"token": "Yes", "logprob": yes}, {"token": "No", "logprob": math.log1p(-math.exp(yes))}]
            choice["logprobs"] = {"content": [{"token": text, "logprob": 0.0,
                                               "top_logprobs": tops[: int(body.get("top_logprobs") or 1)]}]}
        response: dict[str, Any] = {"id": "fake", "object": "chat.completion",
                                    "model": self.model_id or body.get("model"), "choices": [choice]}
        if self.system_fingerprint is not None:
            response["system_fingerprint"] = self.system_fingerprint
        if self.usage:
            response["usage"] = token_usage(body, choice["message"])
        return response

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client went away (a killed run)
                    pass

            def _misbehave(self, fault: str) -> None:
                if fault == "truncated":
                    payload = json.dumps(server.completion(body={"messages": []})).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(payload) + 100))
                    self.end_headers()
                    self.wfile.write(payload[: len(payload) // 2])
                elif fault == "slow_drip":
                    payload = json.dumps(server.completion(body={"messages": []})).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    try:
                        for i in range(len(payload)):
                            self.wfile.write(payload[i:i + 1])
                            self.wfile.flush()
                            time.sleep(server.hang / 20)
                    except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
                        return
                elif fault in ("oversized", "oversized_stream"):
                    self._stream_oversized(announce=fault == "oversized")
                    return
                elif fault == "not_http":
                    self.wfile.write(b"\x00\x01 this is not HTTP\r\n\r\n")
                else:  # reset: RST instead of FIN
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.wfile.flush()
                self.close_connection = True

            def _stream_oversized(self, *, announce: bool) -> None:
                from abduct_vlm.served import MAX_BODY

                self.send_response(200)
                if announce:
                    self.send_header("Content-Length", str(MAX_BODY + 1))
                self.end_headers()
                chunk, left = b" " * (1 << 20), MAX_BODY + 1
                try:
                    while left > 0:
                        self.wfile.write(chunk[:left])
                        left -= len(chunk)
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading, as it should
                    pass
                self.close_connection = True

            def do_GET(self) -> None:
                with server._lock:
                    server.probes += 1
                if self.path.rstrip("/") != "/v1/models":
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())
                elif server.models_status is not None:
                    self._send(server.models_status, json.dumps({"error": {
                        "message": f"fake server error {server.models_status}"}}).encode())
                else:
                    listed = [{"id": server.model_id, "object": "model", "created": int(time.time()),
                               "owned_by": "fake", "root": server.root or server.model_id}] if server.model_id else []
                    self._send(200, json.dumps({"object": "list", "data": listed}).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if _is_probe(body):
                    self._ping(body)
                    return
                with server._lock:
                    server.requests.append(body)
                with server._lock:
                    raw = server.raw.popleft() if server.raw else None
                if raw is not None:
                    self.wfile.write(raw)
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if not self.path.endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())
                    return
                if not server._slots.acquire(blocking=server.overflow != "reject"):  # over capacity
                    with server._lock:
                        server.rejected += 1
                    self._send(429, b'{"error": {"message": "over capacity"}}')
                    return
                try:  # the work counts as in flight; the reply is sent after it
                    with server._lock:
                        server._in_flight += 1
                        server.peak = max(server.peak, server._in_flight)
                    try:
                        reply = self._answer(body)
                    finally:
                        with server._lock:
                            server._in_flight -= 1
                finally:
                    server._slots.release()
                if reply is not None:
                    self._send(*reply)

            def _ping(self, body: dict[str, Any]) -> None:
                with server._lock:
                    server.pings += 1
                if server.ping_status is not None:
                    self._send(server.ping_status, json.dumps({"error": {
                        "message": f"fake server error {server.ping_status}"}}).encode())
                    return
                answer = server.completion(body, "pong")  # not ``reply``: that answers the run's requests
                with server._lock:
                    usage = answer.get("usage") or {}
                    server.ping_tokens["prompt"] += usage.get("prompt_tokens", 0)
                    server.ping_tokens["completion"] += usage.get("completion_tokens", 0)
                self._send(200, json.dumps(answer).encode())

            def _answer(self, body: dict[str, Any]) -> tuple[int, bytes, dict[str, str]] | None:
                fault = server._next_fault()
                if fault == "timeout":
                    time.sleep(server.hang)
                    return None
                time.sleep(server._cost(body))
                if server.dead:  # killed meanwhile: this request is never answered
                    self._misbehave("reset")
                    return None
                if fault == "refuse":
                    return 401, json.dumps({"error": {"message": "invalid API key"}}).encode(), {}
                if fault == "rate_limit":
                    return 429, json.dumps({"error": {"message": "slow down"}}).encode(), {"Retry-After": "0"}
                if fault == "server_error":
                    return 500, b'{"error": {"message": "internal error"}}', {}
                if fault == "invalid_json":
                    return 200, b"{not json", {}
                if fault == "bad_retry_after":
                    return 429, b'{"error": {"message": "slow down"}}', {"Retry-After": "nan"}
                if fault == "nan_logprob":
                    spoilt = server.completion({**body, "logprobs": True})
                    spoilt["choices"][0]["logprobs"]["content"][0]["logprob"] = math.nan
                    return 200, json.dumps(spoilt).encode(), {}  # json.dumps writes NaN
                if fault in STREAMED:
                    self._misbehave(fault)
                    return None
                answer = server.completion(body)
                with server._lock:
                    server.served += 1
                    usage = answer.get("usage") or {}
                    server.tokens["prompt"] += usage.get("prompt_tokens", 0)
                    server.tokens["completion"] += usage.get("completion_tokens", 0)
                    server.tokens["reasoning"] += usage.get("completion_tokens_details", {}).get("reasoning_tokens", 0)
                return 200, json.dumps(answer).encode(), {}

        return Handler


def _is_probe(body: dict[str, Any]) -> bool:
    from abduct_vlm.served import PROBE

    return {k: v for k, v in body.items() if k != "model"} == PROBE


def model_reply(model: Any) -> Callable[[dict[str, Any]], str]:
    """A ``reply`` that answers as a loaded ``vlm`` model (``abduct_vlm``'s, e.g. ``vlm:tiny``)
    answers the same images and text greedily, one request at a time: the fake server then serves
    those weights, as vLLM would, for the parity check (``abduct compare`` of ``vlm:DIR`` and
    ``openai:``). The images come from the request's data URLs, the text is the prompt sent."""
    import base64
    import io

    from PIL import Image

    from abduct import Decoding

    lock = threading.Lock()

    def reply(body: dict[str, Any]) -> str:
        images = [Image.open(io.BytesIO(base64.b64decode(p["image_url"]["url"].split(",", 1)[1])))
                  for m in body.get("messages", []) if isinstance(m.get("content"), list)
                  for p in m["content"] if isinstance(p, dict) and p.get("type") == "image_url"]
        for image in images:
            image.load()
        options = model._generation_kwargs(Decoding(max_new_tokens=int(body.get("max_tokens") or 32)))
        with lock:  # one forward pass at a time, as the model is not thread-safe
            return str(model._generate([model.chat(request_text(body), len(images))], [images], options)[0])

    return reply
