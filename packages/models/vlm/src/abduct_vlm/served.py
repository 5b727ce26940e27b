"""``openai:MODEL,base_url=URL``: a model behind an OpenAI-compatible chat-completions endpoint
(vLLM, llama.cpp's server, SGLang, hosted APIs). Standard library only.

- Each request is one user turn: the input's images as base64 PNG data URLs (regions drawn),
  then the prompt (``prompts.Prompts``, as for ``vlm``). Greedy decoding is sent as
  temperature 0.
- Up to ``concurrency`` requests are in flight at once; ``concurrency=auto[:MAX]`` adapts the
  number to what the server takes (``abduct_vlm.replicas.Limiter``; MAX defaults to 64).
- ``endpoints=URL|URL...``: replicas serving the same model; requests are spread over them
  (least outstanding first), a replica that fails or slows is drained and its requests go to
  the others (``abduct_vlm.replicas.Replicas``). Transport like ``mirrors`` (which fails over
  in a fixed order instead; the two are not combined): ``base_url``, when given, names the
  model and is one of the replicas, else the first endpoint does.
- Requests that send the same images go out together (``group=media``, the default; results
  keep their order), so a server's prefix and encoder caches hit.
- 429, 5xx, timeouts, dropped connections and invalid JSON are retried ``retries`` times with
  exponential backoff (``backoff`` seconds, doubled each time, at most ``max_backoff``; a
  ``Retry-After`` header is obeyed within that cap); any other HTTP error (400, 401, 404, ...)
  is one line with the server's message. Giving up is one line too.
- ``mirrors=URL|URL...``: other base URLs serving the same model; a request that fails in a
  way worth retrying goes to the next one at once (backoff only after every URL failed in
  turn), and the URL that last answered is tried first. Like retries, backoff, timeout and
  concurrency, mirrors are transport, not identity: the fingerprint and the cache key name
  ``base_url`` only, so a run resumed against other mirrors sends only what never came back.
- Every response is written to disk as soon as it arrives (``cache_dir``, default
  ``$ABDUCT_CACHE_DIR/served``; none under ``--no-cache``, under ``--cache-dir`` when given:
  ``abduct.kit.cache.cache_dir_for``), keyed by the endpoint, the exact request body and what the
  server says it serves (``ChatClient.identity``: its ``/models`` entry for the model, the
  ``model`` and ``system_fingerprint`` the probe's answer names; a model redeployed under the
  same name is asked again): a rerun, or a run resumed after a failure, sends only what never
  came back (and the probe).
- The probe: ``GET /models`` once, then one minimal chat request (``PROBE``), before any other
  request (``ChatClient.probe``): a server that cannot be reached, answers 404 (the hint to end
  ``base_url`` in ``/v1``), refuses the key or fails (5xx) is one line with its message within
  ``PROBE_TIMEOUT`` seconds. The chat request's tokens are not in ``usage`` (``probed``).
- ``usage``: the token ledger of the run (results.json's ``tokens``) reads what each answered
  request cost as the server's ``usage`` says (``prompt_tokens``, ``completion_tokens``,
  ``completion_tokens_details.reasoning_tokens``); an answer from the cache costs no tokens and
  counts as cached.
- A reply's ``reasoning_content`` (or ``reasoning``), as vLLM's and SGLang's reasoning parsers
  return it, is kept beside its content (a ``ServedReply``, cached raw); ``reasoning=`` splits
  answer from reasoning in the generation engine (``abduct.kit.reasoning``).
- The reasoning's budget, apart from ``max_tokens`` (``max_new_tokens``), where the server takes
  one: ``reasoning_budget=N`` is sent as ``thinking_token_budget`` (vLLM's chat-completions
  request field; docs/features/reasoning_outputs.md, "Thinking Budget Control": once the
  reasoning reaches N tokens the server forces its end string), ``reasoning_effort=LEVEL`` as
  ``reasoning_effort`` (the OpenAI API's field, also a field of vLLM's ChatCompletionRequest and
  forwarded to the chat template by SGLang). Neither is sent unless given.
- The API key is read from the environment variable ``ABDUCT_OPENAI_API_KEY`` (else
  ``OPENAI_API_KEY``; ``api_key_env=NAME`` picks another) and sent as a bearer token; it is
  never part of a fingerprint, a cache key or any output.
- Scoring (``logprobs=true``, for servers that return log-probabilities): the log-probability
  of the fixed ``answer`` ("yes") as the first token of the reply to ``answer_template``; if it
  is not among the ``top_logprobs`` returned, the lowest of those (an upper bound). Candidate
  texts are scored only through ``{text}`` in ``answer_template``: a chat endpoint gives no
  log-likelihood of a whole text.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import io
import json
import math
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Annotated, Any, Literal, TypeGuard

import numpy as np
from PIL import Image

from abduct import AbductError, Decoding, GenerationRequest, Range, Settings, Spec, TextPool, VisualInput
from abduct.kit import atomic_write_json, progress
from abduct.kit.cache import cache_damaged, cache_dir_for, read_cache_file
from abduct.kit.reasoning import Reasoning, ServedReply
from abduct_vlm.images import input_images
from abduct_vlm.prompts import DEFAULT_ANSWER_TEMPLATE, Prompts, ScoreMode
from abduct_vlm.replicas import Limiter, Replicas, media_key, media_order, open_post

KEY_VARIABLES = ("ABDUCT_OPENAI_API_KEY", "OPENAI_API_KEY")
RETRY_STATUS = {408, 409, 429} | set(range(500, 600))
MAX_BODY = 64 << 20  # bytes: a reply larger than this is refused, not read into memory
PROBE_TIMEOUT = 8.0  # seconds: a dead or misaddressed server is one line well within 10 s
# the probe's chat request, besides the model's name: the least a server answers with its ``model``
# and ``system_fingerprint``
PROBE: dict[str, Any] = {"messages": [{"role": "user", "content": "ping"}], "max_tokens": 1, "temperature": 0.0}
# in a /models entry, what changes from one request to the next (vLLM: the time asked, random ids)
VOLATILE = ("created", "permission")


class ServedError(AbductError):
    """The endpoint answered in a way no retry fixes (or kept failing); one line."""


class TransientError(Exception):
    """A failure worth retrying; ``wait`` is the server's Retry-After, when it gave one;
    ``congestion``: a 429, 503 or timeout (an adaptive concurrency backs off)."""

    def __init__(self, message: str, wait: float | None = None, *, congestion: bool = False) -> None:
        super().__init__(message)
        self.wait = wait
        self.congestion = congestion


def data_url(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _has_choices(response: object) -> TypeGuard[dict[str, Any]]:
    """Whether ``response`` is a chat-completion response with at least one choice."""
    return isinstance(response, dict) and isinstance(response.get("choices"), list) and bool(response["choices"])


class ResponseCache:
    """One JSON file per response, named by the hash of (endpoint, request body, what the server
    says it serves: ``ChatClient.identity``)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @staticmethod
    def key(url: str, body: dict[str, Any], identity: str = "") -> str:
        served = f"\x00{identity}" if identity else ""  # a server that says nothing keeps its old keys
        return hashlib.sha256(f"{url}\x00{json.dumps(body, sort_keys=True)}{served}".encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The kept response, checked as a fresh one is (JSON, finite numbers, choices); a damaged
        file is one warning naming it, removed, and the request is sent again."""
        path = self._path(key)
        data = read_cache_file(path)
        if data is None:
            return None
        try:
            found = json.loads(data, parse_constant=_no_constant, parse_float=_finite_float)
        except ValueError:
            cache_damaged(path, "is not a whole JSON response (cut short, garbled, or a non-finite number)")
            return None
        if not _has_choices(found):
            cache_damaged(path, "holds no chat-completion response with choices")
            return None
        return found

    def put(self, key: str, response: dict[str, Any]) -> None:
        atomic_write_json(self._path(key), response)


class ChatClient:
    """POSTs chat-completion bodies with a concurrency limit, retries and a response cache."""

    def __init__(self, base_url: str, *, api_key: str | None, timeout: float = 60.0, retries: int = 5,
                 backoff: float = 1.0, max_backoff: float = 30.0, concurrency: int = 8,
                 cache: ResponseCache | None = None, quiet: bool = True,
                 sleep: Callable[[float], None] = time.sleep, mirrors: Sequence[str] = (),
                 endpoints: Sequence[str] = (), adaptive: bool = False, group_media: bool = True,
                 model: str = "") -> None:
        self.url = _endpoint(base_url)  # the model's identity: fingerprints and cache keys name this one
        self.urls = list(dict.fromkeys([self.url, *(_endpoint(m) for m in (*mirrors, *endpoints))]))
        self.replicas = Replicas(len(self.urls)) if endpoints else None  # spread over, else fail over in order
        self.limiter = Limiter(concurrency, adaptive=adaptive)
        self.group_media = group_media
        self.grouping = {"groups": 0, "shared": 0}  # what media grouping did, over all post_many calls
        self._preferred = 0  # the URL that answered last
        self.api_key = api_key
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.concurrency = max(1, concurrency)
        self.cache = cache
        self.quiet = quiet
        self.sleep = sleep
        self.sent = 0  # HTTP requests sent, retries included
        self._lock = threading.Lock()
        self.reported: set[tuple[str, str]] = set()  # (model, system_fingerprint) the responses named
        # the token ledger (abduct._engine.tokens reads it as the model's ``usage``): answers from the
        # server with its ``usage``, answers from the cache (no tokens)
        self.usage = {"requests": 0, "cached": 0, "prompt": 0, "completion": 0, "reasoning": 0}
        self.model = model  # the served model's name, looked up in the server's /models
        self._identity: str | None = None  # what the probe read (see ``identity``)
        self.probed: dict[str, int] = {}  # what the probe's chat request cost (not in ``usage``)
        self._probe_lock = threading.Lock()

    def identity(self) -> str:
        """What the server says it serves as ``model`` (its /models entry, without what changes per
        request; "" where it lists nothing for it), asked once before any request (``probe``)."""
        with self._probe_lock:
            if self._identity is None:
                self._identity = self.probe()
            return self._identity

    def probe(self) -> str:
        """``/models`` (``_listed``), then one minimal chat request (``_ping``) to the URL that
        answered: what both say the server serves (the /models entry; the ``model`` and
        ``system_fingerprint`` the answer names, which change with a snapshot under the same name
        where /models says nothing new), as stable text; "" where neither says anything."""
        listed, url = self._listed()
        answered = self._ping(url)
        return listed + (f"\x00{answered}" if answered else "")

    def _ping(self, url: str) -> str:
        """One user message "ping", ``max_tokens=1``, temperature 0, not retried, kept out of
        ``usage`` (recorded in ``probed``). A refused key, a 404 and 5xx are one line as for
        /models; any other answer that is not a chat completion (a 400 from a model that refuses
        ``max_tokens``, a busy 429 or 503, a timeout) only means the server said nothing about itself."""
        body = {"model": self.model, **PROBE}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            with open_post(url, json.dumps(body).encode(), headers, min(self.timeout, PROBE_TIMEOUT)) as response:
                raw = self._read_body(response)
            parsed = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
        except urllib.error.HTTPError as exc:
            message = _server_message(exc)
            if exc.code == 404 and not url.removesuffix("/chat/completions").rstrip("/").endswith("/v1"):
                raise ServedError(f"{url}: HTTP 404{message}; an OpenAI-compatible base_url usually ends in /v1") from None
            if exc.code in (401, 403, 404) or (exc.code >= 500 and exc.code != 503):  # 503: busy, as 429
                raise ServedError(f"{url} refused the probe: HTTP {exc.code}{message}; nothing was sent") from None
            return ""
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError, TransientError):
            return ""  # /models answered, so the server is there: the run's requests retry as they do
        if not _has_choices(parsed):
            return ""
        given = parsed.get("usage")
        usage: dict[str, Any] = given if isinstance(given, dict) else {}
        self.probed = {"requests": 1, **{name: value for name, field in (("prompt", "prompt_tokens"),
                                                                        ("completion", "completion_tokens"))
                                         if isinstance(value := usage.get(field), int) and not isinstance(value, bool)}}
        model, fingerprint = reported_by(parsed)
        with self._lock:  # who answered, even where every answer of the run comes from a cache
            self.reported.add((model, fingerprint))
        said = {k: v for k, v in (("model", model), ("system_fingerprint", fingerprint)) if v}
        return json.dumps(said, sort_keys=True) if said else ""

    def _listed(self) -> tuple[str, str]:
        """GET ``/models`` from the base URL, then each other URL until one answers: a server that
        cannot be reached (on every URL), refuses the key, is misaddressed (404) or broken (5xx) is
        one line with its own message within ``PROBE_TIMEOUT``, before any request is sent. The
        model's entry (``_identity``) and the URL that answered."""
        failed: list[str] = []
        for url in self.urls:
            base = url.removesuffix("/chat/completions")
            try:
                return _identity(self._get(base + "/models"), self.model), url
            except urllib.error.HTTPError as exc:
                message = _server_message(exc)
                if exc.code == 404 and not base.rstrip("/").endswith("/v1"):
                    raise ServedError(f"{base}/models: HTTP 404{message}; an OpenAI-compatible base_url usually "
                                      f"ends in /v1 (base_url={base}/v1)") from None
                if exc.code == 404:  # a server without /models: nothing said about what it serves
                    return "", url
                if exc.code in (401, 403):  # no other URL fixes the key
                    raise ServedError(f"{base}/models refused the probe: HTTP {exc.code}{message}") from None
                failed.append(f"{base}/models: HTTP {exc.code}{message}")
            except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
                failed.append(f"cannot reach the server at {base} ({getattr(exc, 'reason', exc)})")
        if all(f.split(": HTTP ")[-1][:3] in ("408", "409", "429") for f in failed):
            return "", self.url  # alive but busy: the run's requests wait for it as retries do
        more = f" (and the {len(failed) - 1} other URLs)" if len(failed) > 1 else ""
        raise ServedError(f"{failed[0]}{more}; nothing was sent")

    def _get(self, url: str) -> Any:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        request = urllib.request.Request(url, headers=headers, method="GET")
        with urllib.request.urlopen(request, timeout=min(self.timeout, PROBE_TIMEOUT)) as response:
            return json.loads(self._read_body(response))

    def _send(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        with self._lock:
            self.sent += 1
        try:
            with open_post(url, json.dumps(body).encode(), headers, self.timeout) as response:
                announced = getattr(response, "length", None)
                if announced is not None and announced > MAX_BODY:  # refused before a byte of it is read
                    raise ServedError(f"{url} announced a reply of {announced} bytes, over the {MAX_BODY >> 20} MiB cap; "
                                      "refused")
                raw = self._read_body(response)
                missing = getattr(response, "length", None)  # what Content-Length promised and never came
                if missing and len(raw) <= MAX_BODY:
                    raise TransientError(f"a truncated reply ({len(raw)} of {len(raw) + missing} bytes)")
        except urllib.error.HTTPError as exc:
            message = _server_message(exc)
            if exc.code in RETRY_STATUS:
                raise TransientError(f"HTTP {exc.code}{message}", _retry_after(exc),
                                     congestion=exc.code in (429, 503)) from None
            raise ServedError(f"{url} refused the request: HTTP {exc.code}{message}") from None
        except TimeoutError:
            raise TransientError(f"no answer within {self.timeout:g} s", congestion=True) from None
        except http.client.HTTPException as exc:  # a truncated body, a reply that is not HTTP
            raise TransientError(f"a broken reply ({type(exc).__name__})") from None
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise TransientError(f"no answer within {self.timeout:g} s", congestion=True) from None
            raise TransientError(f"cannot reach the server ({reason})") from None
        if len(raw) > MAX_BODY:
            raise ServedError(f"{url} sent a reply larger than the {MAX_BODY >> 20} MiB cap; refused")
        try:  # NaN/Infinity refused: nothing non-finite reaches a score or the cache
            parsed = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
        except ValueError as exc:
            raise TransientError(f"invalid JSON in the response ({str(exc)[:80]})") from None
        if not _has_choices(parsed):
            raise TransientError(f"a response without choices ({str(parsed)[:60]})")
        return parsed

    def _read_body(self, response: Any) -> bytes:
        """At most MAX_BODY + 1 bytes, within ``timeout`` in all: the socket timeout alone lets a
        server dripping one byte at a time hold a request forever."""
        deadline = time.monotonic() + self.timeout
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_BODY:
            chunk = response.read1(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if time.monotonic() > deadline:
                raise TransientError(f"the reply took longer than {self.timeout:g} s to arrive")
        return b"".join(chunks)

    def post(self, body: dict[str, Any], media: str | None = None) -> dict[str, Any]:
        """The response to ``body``: from the cache, else from the server (retried), then cached;
        ``media`` (``replicas.media_key``) lets a replica that was sent the same images answer it."""
        key = ResponseCache.key(self.url, body, self.identity())
        if self.cache is not None and (found := self.cache.get(key)) is not None:
            with self._lock:
                self.usage["cached"] += 1
            return found
        delay = self.backoff
        first = self._preferred
        failed: list[int] = []
        for attempt in range(self.retries + 1):
            index = self.replicas.acquire(media, failed) if self.replicas else (first + attempt) % len(self.urls)
            started = time.monotonic()
            try:
                response = self._send(self.urls[index], body)
                self._preferred = index
                self._ended(index, time.monotonic() - started)
                break
            except ServedError:  # the request's fault (401, 400, ...), not the replica's
                self._ended(index, None)
                raise
            except TransientError as exc:
                self._ended(index, None, exc)
                failed.append(index)
                if attempt == self.retries:
                    tried = f"{attempt + 1} tries" + (f" over {len(self.urls)} URLs" if len(self.urls) > 1 else "")
                    raise ServedError(f"{self.urls[index]}: {exc} (gave up after {tried})") from None
                if (attempt + 1) % len(self.urls):  # a mirror not yet tried in this round: no wait
                    continue
                wait = delay if exc.wait is None else min(max(exc.wait, 0.0), self.max_backoff)
                self.sleep(wait)
                delay = min(delay * 2, self.max_backoff)
        self._count(response)
        if self.cache is not None:
            self.cache.put(key, response)
        return response

    def _ended(self, index: int, seconds: float | None, failure: TransientError | None = None) -> None:
        """One try on ``urls[index]`` ended: answered in ``seconds``, else failed (``failure``: retried)."""
        if seconds is not None:
            self.limiter.answered(seconds)
        elif failure is not None and failure.congestion:
            self.limiter.congested()
        if self.replicas is not None:
            self.replicas.release(index, seconds, failed=failure is not None)

    def _count(self, response: dict[str, Any]) -> None:
        """One answered request and the tokens the server says it cost (0 where it gives no ``usage``)."""
        given = response.get("usage")
        usage: dict[str, Any] = given if isinstance(given, dict) else {}
        details = usage.get("completion_tokens_details")
        counts = {"prompt": usage.get("prompt_tokens"), "completion": usage.get("completion_tokens"),
                  "reasoning": details.get("reasoning_tokens") if isinstance(details, dict) else None}
        with self._lock:
            self.usage["requests"] += 1
            for name, value in counts.items():
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    self.usage[name] += value

    def post_many(self, bodies: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Responses in order, ``concurrency`` at a time (or as many as the adaptive limit allows),
        sent grouped by the images they share (``group_media``). Each is cached when it arrives, so
        a failure of one loses none of the others; the first failure is raised after all ended."""
        results: list[dict[str, Any] | None] = [None] * len(bodies)
        errors: list[Exception] = []
        media = [media_key(body) if self.group_media or self.replicas else None for body in bodies]
        order, grouped = media_order(media) if self.group_media else (list(range(len(bodies))), {})
        for name, value in grouped.items():
            self.grouping[name] += value
        quiet = self.quiet or len(bodies) < 2
        outcomes: list[Any] = [None] * len(bodies)  # each request's response, or the exception it raised
        shown: list[Future[None]] = [Future() for _ in bodies] if not quiet else []  # for the progress bar
        feed, feeding, adaptive = iter(order), threading.Lock(), self.limiter.adaptive

        def work() -> None:  # each thread takes the next request in order (and, adapting, a slot for it)
            while True:
                with feeding:
                    i = next(feed, None)
                    if i is None:
                        return
                    if adaptive:  # while holding the feed: requests leave in the sending order
                        self.limiter.acquire()
                try:
                    outcomes[i] = self.post(bodies[i], media[i])
                except BaseException as exc:
                    outcomes[i] = exc
                finally:
                    if adaptive:
                        self.limiter.release()
                    if shown:
                        shown[i].set_result(None)

        workers = [threading.Thread(target=work, daemon=True) for _ in range(min(self.limiter.maximum, len(bodies)))]
        for worker in workers:
            worker.start()
        for answered in progress([shown[i] for i in order] if shown else [], desc="requests", quiet=quiet, unit="req"):
            answered.result()
        for worker in workers:
            worker.join()
        for i in order:
            if isinstance(outcomes[i], BaseException):  # keep collecting: the others are cached meanwhile
                if not isinstance(outcomes[i], Exception):
                    raise outcomes[i]  # KeyboardInterrupt, SystemExit
                errors.append(outcomes[i])
            else:
                results[i] = outcomes[i]
        self.limiter.settled()
        if len(errors) == len(bodies) == 1:
            raise errors[0]
        if errors:  # the answered ones are cached: a rerun sends only these
            raise ServedError(f"{len(errors)} of {len(bodies)} requests failed (first: {errors[0]}); the "
                              f"{len(bodies) - len(errors)} answered are cached, so a rerun sends only the failed ones")
        self.reported.update(reported_by(r) for r in results if r is not None)  # cached ones: who answered then
        return [r for r in results if r is not None]


def reported_by(response: dict[str, Any]) -> tuple[str, str]:
    """(the model id, the ``system_fingerprint``) a response names; "" for what it leaves out."""
    model, fingerprint = response.get("model"), response.get("system_fingerprint")
    return (model if isinstance(model, str) else "", fingerprint if isinstance(fingerprint, str) else "")


def _identity(listed: Any, model: str) -> str:
    """The /models entry for ``model`` (else the only one listed) without what changes per request,
    as stable text; "" when the server lists no such entry."""
    entries = [e for e in listed.get("data") or [] if isinstance(e, dict)] if isinstance(listed, dict) else []
    mine = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    if not mine:
        return ""
    return json.dumps({k: v for k, v in mine[0].items() if k not in VOLATILE}, sort_keys=True, default=str)


def _endpoint(base_url: str) -> str:
    return base_url.rstrip("/") + "/chat/completions"


def _base_urls(model: str, base_url: str | None, mirrors: str | None, endpoints: str | None = None) -> list[str]:
    """``base_url`` (else the first endpoint) then each of ``mirrors`` or ``endpoints`` (separated by
    ``|`` or spaces), all http(s) URLs."""
    replicas = (endpoints or "").replace("|", " ").split()
    if mirrors and replicas:
        raise AbductError(f"openai:{model}: give mirrors= (fail over in order) or endpoints= (spread over "
                          "replicas), not both")
    if not base_url and not replicas:
        raise AbductError(f"openai:{model} needs base_url=URL (e.g. base_url=http://127.0.0.1:8000/v1)")
    urls = [base_url or replicas[0], *(mirrors or "").replace("|", " ").split(), *replicas]
    option = "mirrors" if mirrors else "endpoints"
    for name, url in zip(["base_url" if base_url else option, *[option] * (len(urls) - 1)], urls):
        if not url.startswith(("http://", "https://")):
            raise AbductError(f"openai:{model}: {name} '{url}' is not an http(s) URL")
    return urls


def _concurrency(model: str, value: str) -> tuple[int, bool]:
    """``N`` (fixed) or ``auto[:MAX]`` (adaptive, at most MAX, default 64): (the most in flight, adaptive)."""
    text = str(value).strip().lower()
    head, colon, tail = text.partition(":")
    adaptive = head == "auto"
    digits = (tail if colon else "64") if adaptive else text
    if digits.isdigit() and int(digits) >= 1:
        return int(digits), adaptive
    raise AbductError(f"openai:{model}: option 'concurrency' must be a positive integer, auto or auto:MAX, not '{value}'")


def _server_message(exc: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(exc.read())
        message = body.get("error", {}).get("message") if isinstance(body.get("error"), dict) else body.get("error")
    except Exception:
        return ""
    return f" ({str(message).splitlines()[0][:200]})" if message else ""


def _retry_after(exc: urllib.error.HTTPError) -> float | None:
    value = exc.headers.get("Retry-After") if exc.headers is not None else None
    try:
        wait = float(value) if value is not None else None
    except ValueError:
        return None
    return wait if wait is not None and math.isfinite(wait) and wait >= 0 else None  # nan, -1: our own backoff


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 overflows to inf
        raise ValueError(f"{text[:20]} overflows")
    return value


def reply_text(response: dict[str, Any], url: str) -> str:
    try:
        content = response["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ServedError(f"{url}: a response without choices[0].message.content") from None
    text = "" if content is None else str(content).strip()
    message = response["choices"][0]["message"]
    thought = message.get("reasoning_content") or message.get("reasoning")  # vLLM/SGLang reasoning parsers
    if isinstance(thought, str) and thought.strip():  # kept beside the answer; split by the model's reasoning=
        return ServedReply(text, thought, response["choices"][0].get("finish_reason") == "length")
    return text


def answer_logprob(response: dict[str, Any], answer: str, url: str) -> float:
    """The log-probability of ``answer`` as the reply's first token (see the module docstring)."""
    try:
        first = response["choices"][0]["logprobs"]["content"][0]
        tops = first.get("top_logprobs") or [first]
        pairs = [(str(t["token"]), float(t["logprob"])) for t in tops]
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):  # a null or non-object entry too
        raise ServedError(f"{url} returned no logprobs, so this model cannot score; drop logprobs=true "
                          "(generation tasks) or use a server that returns them (e.g. vLLM)") from None
    if not all(math.isfinite(lp) for _, lp in pairs):
        raise ServedError(f"{url} returned a non-finite logprob for the answer; refused")
    wanted = answer.strip().lower()
    matching = [lp for token, lp in pairs if token.strip().lower() == wanted]
    return max(matching) if matching else min(lp for _, lp in pairs)


class ServedModel:
    """Generates through a chat-completions endpoint (see the module docstring)."""

    accepts = frozenset({"image", "region", "context", "related"})
    reasoning = Reasoning("auto")  # reasoning=: how the generation engine splits each reply

    def __init__(self, model: str, client: ChatClient, prompts: Prompts, *, max_images: int | None = None,
                 name: str = "openai", reasoning_budget: int | None = None, reasoning_effort: str | None = None) -> None:
        self.model = model
        self.client = client
        self.prompts = prompts
        self.max_images = max_images
        self.name = name
        # the reasoning's limits, as request fields (module docstring); none: the bodies of before
        self.thinking = {k: v for k, v in (("thinking_token_budget", reasoning_budget),
                                           ("reasoning_effort", reasoning_effort)) if v is not None}
        # What makes an answer: the served model's name and endpoint, and our prompts (no key).
        self.described = f"openai|{model}|{client.url}|{prompts.describe()}|max_images={max_images}"
        self.described += "".join(f"|{k}={v}" for k, v in self.thinking.items())

    @property
    def group_media(self) -> bool:
        """Asks the generation engine to order the whole run's requests by the media they send,
        so that grouping reaches across its batches (``group=media``)."""
        return self.client.group_media

    @property
    def fingerprint(self) -> str:
        """``described``, and what the server says it serves (probed when first asked: a model
        redeployed under the same name is another model, for the core's caches too)."""
        identity = self.client.identity()
        return self.described + (f"|served={hashlib.sha256(identity.encode()).hexdigest()[:16]}" if identity else "")

    def describe_inputs(self) -> dict[str, Any]:
        """What shaped the inputs and who answered (results.json's ``model.inputs``): images go as
        PNG at their own size (the server's processor resizes them); the model ids and
        ``system_fingerprint`` values the responses reported (a list when they changed mid-run);
        the URLs and the concurrency used."""
        facts: dict[str, Any] = {"image": {"encoding": "png", "client_resize": "none", "max_images": self.max_images}}
        client = self.client
        served: dict[str, Any] = {"endpoints": len(client.urls) if client.replicas else 1,
                                  "mirrors": 0 if client.replicas else len(client.urls) - 1, **client.limiter.describe()}
        if client.group_media:
            served["grouping"] = {"by": "media", **client.grouping}
        if self.thinking:
            facts["reasoning"] = dict(self.thinking)
        if client.replicas is not None:
            served["replicas"] = client.replicas.describe()
        for index, name in ((0, "model_id"), (1, "system_fingerprint")):
            seen = sorted({pair[index] for pair in self.client.reported} - {""})
            if seen:
                served[name] = seen[0] if len(seen) == 1 else seen
        if client.probed:  # the probe's one chat request, not in the token ledger
            served["probe"] = dict(client.probed)
        facts["served"] = served
        return facts

    @property
    def usage(self) -> dict[str, int]:
        """The token ledger so far (requests, cached, prompt, completion, reasoning; see ``ChatClient``)."""
        return dict(self.client.usage)

    def _message(self, visual: VisualInput, text: str) -> dict[str, Any]:
        images = input_images(visual, model=self.name, max_images=self.max_images)
        if not images:
            return {"role": "user", "content": text}
        parts: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": data_url(im)}} for im in images]
        return {"role": "user", "content": [*parts, {"type": "text", "text": text}]}

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        if decoding.num_beams != 1:
            raise AbductError(f"model '{self.name}' cannot do beam search (num_beams={decoding.num_beams})")
        bodies = []
        for r in requests:
            body: dict[str, Any] = {"model": self.model,
                                    "messages": [self._message(r.visual, self.prompts.generation(r.visual, r.prompt))],
                                    "max_tokens": decoding.max_new_tokens, "temperature": 0.0, **self.thinking}
            if decoding.do_sample:
                body.update(temperature=decoding.temperature, top_p=decoding.top_p,
                            seed=decoding.seed_for(f"{r.visual.key(portable=True)}\x00{r.prompt or ''}") % (2**31))
            bodies.append(body)
        return [reply_text(response, self.client.url) for response in self.client.post_many(bodies)]


class ScoringServedModel(ServedModel):
    """Also scores, from the log-probability of a fixed answer (servers that return logprobs)."""

    def __init__(self, *args: Any, top_logprobs: int = 20, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.top_logprobs = top_logprobs
        self.described += f"|top_logprobs={top_logprobs}"

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        if len(visuals) != len(texts):
            raise ValueError("score() needs as many visuals as texts")
        bodies = []
        for visual, text in zip(visuals, texts):
            prompt, answer = self.prompts.scoring(visual, text)
            if answer != self.prompts.answer:
                raise AbductError(f"model '{self.name}' scores only a fixed answer (a chat endpoint gives no "
                                  "likelihood of a whole text): use score=answer")
            bodies.append({"model": self.model, "messages": [self._message(visual, prompt)], "max_tokens": 1,
                           "temperature": 0.0, "logprobs": True, "top_logprobs": self.top_logprobs})
        responses = self.client.post_many(bodies)
        return np.array([answer_logprob(r, self.prompts.answer, self.client.url) for r in responses], dtype=np.float64)


def api_key(variable: str | None) -> str | None:
    names = (variable,) if variable else KEY_VARIABLES
    return next((os.environ[n] for n in names if os.environ.get(n)), None)


def make_openai(spec: Spec, settings: Settings, *, base_url: str | None = None, mirrors: str | None = None,
                endpoints: str | None = None, concurrency: str = "8", group: Literal["media", "none"] = "media", timeout: Annotated[float, Range(gt=0)] = 60.0,
                retries: Annotated[int, Range(ge=0)] = 5, backoff: Annotated[float, Range(ge=0)] = 1.0,
                max_backoff: Annotated[float, Range(ge=0)] = 30.0, logprobs: bool = False,
                top_logprobs: Annotated[int, Range(ge=0, le=20)] = 20, api_key_env: str | None = None,
                cache: bool = True, cache_dir: Path | None = None, template: str | None = None,
                score_template: str | None = None, answer_template: str | None = None,
                question: str | None = None, answer: str = "yes", score: ScoreMode = "answer",
                max_images: Annotated[int | None, Range(ge=1)] = None, reasoning: str = "auto",
                reasoning_budget: Annotated[int | None, Range(ge=1)] = None, reasoning_effort: str | None = None) -> ServedModel:
    """``openai:MODEL,base_url=URL[,mirrors=URL|URL...|,endpoints=URL|URL...][,concurrency=8|auto[:MAX]][,group=media|none][,timeout=60][,retries=5][,backoff=1][,max_backoff=30]
    [,logprobs=false][,top_logprobs=20][,api_key_env=NAME][,cache=true][,cache_dir=DIR][,template=...]
    [,answer_template=...][,question=...][,answer=yes][,score=answer][,max_images=N][,reasoning=auto|none|TAG|REGEX]
    [,reasoning_budget=N][,reasoning_effort=LEVEL]``."""
    if not spec.argument:
        raise AbductError("openai needs the served model's name: openai:MODEL,base_url=URL")
    primary, *others = _base_urls(spec.argument, base_url, mirrors, endpoints)
    most, adaptive = _concurrency(spec.argument, concurrency)
    split = Reasoning.parse(reasoning, f"openai:{spec.argument}")
    given = {k: v for k, v in (("template", template), ("score_template", score_template),
                               ("question", question)) if v is not None}
    prompts = Prompts(**given, answer_template=answer_template or DEFAULT_ANSWER_TEMPLATE, answer=answer, score=score)
    allowed = cache_dir_for("served")  # None under --no-cache; under --cache-dir when one is given
    store = ResponseCache(cache_dir or allowed) if cache and allowed is not None else None
    client = ChatClient(primary, mirrors=() if endpoints else others, endpoints=others if endpoints else (),
                        api_key=api_key(api_key_env), timeout=timeout, retries=retries, backoff=backoff,
                        max_backoff=max_backoff, concurrency=most, adaptive=adaptive, group_media=group == "media",
                        cache=store, model=spec.argument)
    name = str(Spec(spec.name, spec.argument))
    if logprobs:
        made: ServedModel = ScoringServedModel(spec.argument, client, prompts, max_images=max_images, name=name,
                                               top_logprobs=top_logprobs, reasoning_budget=reasoning_budget,
                                               reasoning_effort=reasoning_effort)
    else:
        made = ServedModel(spec.argument, client, prompts, max_images=max_images, name=name,
                           reasoning_budget=reasoning_budget, reasoning_effort=reasoning_effort)
    made.reasoning = split
    return made
