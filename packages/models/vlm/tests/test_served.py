"""``openai:MODEL,base_url=URL`` against the local fake server: requests, concurrency, retries,
one-line errors, the response cache, the API key, log-probability scoring."""

from __future__ import annotations

import base64
import io
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from abduct import AbductError, Box, Decoding, GenerationRequest, Region, Settings, VisualInput
from abduct.host import build_registry, load_model
from abduct_testing import GeneratorContract, make_images
from abduct_vlm.served import ServedModel
from abduct_vlm.testing import FakeOpenAIServer, default_reply

FAST = "backoff=0.01,max_backoff=0.05,timeout=1"


def served(server: FakeOpenAIServer, cache: Path | None, extra: str = "") -> ServedModel:
    given = {part.split("=", 1)[0] for part in extra.split(",")}
    fast = ",".join(part for part in FAST.split(",") if part.split("=", 1)[0] not in given)  # extra overrides
    options = f"base_url={server.base_url},{fast}" + (f",cache_dir={cache}" if cache else ",cache=false")
    model: ServedModel = load_model(f"openai:fake,{options}{extra}", Settings(), build_registry()).model
    return model


def requests_for(tmp_path: Path, n: int = 3) -> list[GenerationRequest]:
    paths = make_images(tmp_path / "images", n)
    return [GenerationRequest(VisualInput(str(p), Region((Box(2, 2, 10, 10),)), context=f"clue {i}"), "What now?")
            for i, p in enumerate(paths)]


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer() as fake:
        yield fake


class TestServedGenerator(GeneratorContract):
    def make_generator(self) -> object:
        return served(self.server, None)

    @pytest.fixture(autouse=True)
    def _server(self, server: FakeOpenAIServer) -> None:
        self.server = server


def test_images_go_as_png_data_urls_in_order_with_the_prompt(server: FakeOpenAIServer, tmp_path: Path) -> None:
    paths = make_images(tmp_path, 3)
    triplet = VisualInput(str(paths[0]), related=(VisualInput(str(paths[1])), VisualInput(str(paths[2]))))
    text = served(server, None).generate([GenerationRequest(triplet, "Answer with 1 or 2 only.")], Decoding(), None)
    assert text[0] in {"1", "2"} and text[0] == default_reply(server.requests[0])
    body = server.requests[0]
    assert body["model"] == "fake" and body["temperature"] == 0.0 and body["max_tokens"] == 32
    parts = body["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["image_url"] * 3 + ["text"]
    assert parts[-1]["text"] == "Answer with 1 or 2 only."
    for part, path in zip(parts, paths):
        url = part["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        decoded = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))
        assert np.array_equal(decoded, np.asarray(Image.open(path).convert("RGB")))  # lossless, no region here
    served(server, None).generate([GenerationRequest(VisualInput(context="only text"), "Hi")], Decoding(), None)
    assert server.requests[-1]["messages"][0]["content"] == "only text\nHi"


def test_at_most_concurrency_requests_in_flight(tmp_path: Path) -> None:
    with FakeOpenAIServer(latency=0.1) as fake:
        model = served(fake, None, ",concurrency=3")
        started = time.perf_counter()
        model.generate(requests_for(tmp_path, 9), Decoding(), None)
        took = time.perf_counter() - started
    assert fake.peak == 3 and fake.served == 9
    assert took >= 0.3  # 9 requests, 3 at a time, 0.1 s each


@pytest.mark.parametrize("fault", ["rate_limit", "server_error", "invalid_json", "timeout", "truncated", "not_http",
                                   "reset", "bad_retry_after", "nan_logprob", "slow_drip"])
def test_transient_faults_are_retried(fault: str, tmp_path: Path) -> None:
    with FakeOpenAIServer(faults=[fault, fault], hang=1.5) as fake:
        model = served(fake, None)
        texts = model.generate(requests_for(tmp_path, 1), Decoding(), None)
    assert texts and len(fake.requests) == 3 and fake.served == 1 and model.client.sent == 3


def test_refusal_and_giving_up_are_one_line(tmp_path: Path) -> None:
    with FakeOpenAIServer(always="refuse") as fake:
        with pytest.raises(AbductError) as err:
            served(fake, None).generate(requests_for(tmp_path, 1), Decoding(), None)
        assert len(fake.requests) == 1  # not retried
    assert str(err.value) == f"{fake.base_url}/chat/completions refused the request: HTTP 401 (invalid API key)"
    with FakeOpenAIServer(always="rate_limit") as fake:
        with pytest.raises(AbductError, match=r"HTTP 429 \(slow down\) \(gave up after 3 tries\)$"):
            served(fake, None, ",retries=2").generate(requests_for(tmp_path, 1), Decoding(), None)
    with FakeOpenAIServer() as fake:
        url = fake.base_url
    with pytest.raises(AbductError, match="cannot reach the server"):  # nothing listens there any more
        load_model(f"openai:fake,base_url={url},{FAST},retries=1,cache=false", Settings(),
                   build_registry()).model.generate(requests_for(tmp_path, 1), Decoding(), None)


def test_no_finished_response_is_lost_and_a_rerun_sends_nothing(tmp_path: Path) -> None:
    requests = requests_for(tmp_path, 4)
    with FakeOpenAIServer(faults=["refuse"]) as fake:
        with pytest.raises(AbductError, match="refused"):
            served(fake, tmp_path / "cache", ",concurrency=1").generate(requests, Decoding(), None)
        assert fake.served == 3  # the other three came back and were written down
        again = served(fake, tmp_path / "cache", ",concurrency=1")
        texts = again.generate(requests, Decoding(), None)
        assert again.client.sent == 1 and fake.served == 4 and len(texts) == 4
        third = served(fake, tmp_path / "cache")
        assert third.generate(requests, Decoding(), None) == texts and third.client.sent == 0


def test_the_api_key_is_sent_and_never_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str | None] = []
    with FakeOpenAIServer() as fake:
        original = fake._handler()

        class Spy(original):  # type: ignore[misc,valid-type]
            def do_POST(self) -> None:
                seen.append(self.headers.get("Authorization"))
                super().do_POST()

        fake._server.RequestHandlerClass = Spy
        monkeypatch.setenv("ABDUCT_OPENAI_API_KEY", "sk-secret-123")
        model = served(fake, tmp_path / "cache")
        model.generate(requests_for(tmp_path, 1), Decoding(), None)
        monkeypatch.setenv("MY_KEY", "sk-other")
        served(fake, None, ",api_key_env=MY_KEY").generate(requests_for(tmp_path, 1), Decoding(), None)
    assert seen == ["Bearer sk-secret-123"] * 2 + ["Bearer sk-other"] * 2  # the probe's request, then the run's
    assert "sk-" not in model.fingerprint
    assert not any("sk-secret" in p.read_text() for p in (tmp_path / "cache").rglob("*.json"))


def test_scores_from_logprobs_only_when_the_server_gives_them(tmp_path: Path) -> None:
    paths = make_images(tmp_path, 2)
    pair = VisualInput(str(paths[0]), related=(VisualInput(str(paths[1])),))
    with FakeOpenAIServer() as fake:
        model = served(fake, None, ",logprobs=true,top_logprobs=2")
        scores = model.score([pair, pair], ["", ""])
        body = fake.requests[-1]
        assert body["logprobs"] is True and body["max_tokens"] == 1 and body["top_logprobs"] == 2
        expected = fake.completion(body)["choices"][0]["logprobs"]["content"][0]["top_logprobs"][0]["logprob"]
        assert scores[0] == scores[1] == pytest.approx(expected)
        with pytest.raises(AbductError, match="answer_template has no {text}: every candidate would get the same"):
            model.score([VisualInput(str(paths[0]))], ["it rained"])
        with pytest.raises(AbductError, match="scores only a fixed answer"):
            served(fake, None, ",logprobs=true,score=auto").score([VisualInput(str(paths[0]))], ["it rained"])
        texts = served(fake, None, ',logprobs=true,answer_template="Is {text} plausible? yes or no"')
        assert np.isfinite(texts.score([VisualInput(str(paths[0]))], ["it rained"])).all()
        assert not hasattr(served(fake, None), "score")  # without logprobs=true it only generates
    with FakeOpenAIServer() as fake:
        fake.completion = lambda body: {"choices": [{"message": {"content": "Yes"}}]}  # type: ignore[method-assign]
        with pytest.raises(AbductError, match="returned no logprobs, so this model cannot score"):
            served(fake, None, ",logprobs=true").score([pair], [""])


def test_bad_specs_are_one_line() -> None:
    registry = build_registry()
    for spec, message in [("openai", "needs the served model's name"), ("openai:m", "needs base_url=URL"),
                          ("openai:m,base_url=ftp://x", r"is not an http\(s\) URL")]:
        with pytest.raises(AbductError, match=message):
            load_model(spec, Settings(), registry)
    with FakeOpenAIServer() as fake:
        with pytest.raises(AbductError, match="cannot do beam search"):
            served(fake, None).generate([GenerationRequest(VisualInput(context="x"))], Decoding(num_beams=2), None)


def test_fake_server_refuses_unknown_faults() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        FakeOpenAIServer(faults=["explode"])
    assert json.loads(json.dumps(default_reply({"messages": [{"content": "yes or no?"}]}))) in {"Yes", "No"}


def test_nothing_non_finite_is_cached(tmp_path: Path) -> None:
    with FakeOpenAIServer(faults=["nan_logprob"]) as fake:
        served(fake, tmp_path / "cache").generate(requests_for(tmp_path, 1), Decoding(), None)
        assert len(fake.requests) == 2  # the NaN reply was refused and asked again
    for cached in (tmp_path / "cache").rglob("*.json"):
        assert "NaN" not in cached.read_text() and "Infinity" not in cached.read_text()


def test_one_exhausted_request_does_not_stop_the_others_and_a_rerun_sends_only_it(tmp_path: Path) -> None:
    requests = requests_for(tmp_path, 4)
    with FakeOpenAIServer(faults=["truncated"] * 2) as fake:  # the first request fails twice: its last try
        with pytest.raises(AbductError) as err:
            served(fake, tmp_path / "cache", ",concurrency=1,retries=1").generate(requests, Decoding(), None)
        assert fake.served == 3
        message = str(err.value)
        assert "1 of 4 requests failed" in message and "truncated reply" in message and "\n" not in message
        again = served(fake, tmp_path / "cache", ",concurrency=1,retries=10")  # more patience: same model
        assert len(again.generate(requests, Decoding(), None)) == 4 and again.client.sent == 1


def test_transport_settings_are_not_part_of_the_model_identity(server: FakeOpenAIServer) -> None:
    base = served(server, None)
    patient = served(server, None, ",retries=10,concurrency=2")
    mirrored = served(server, None, ',mirrors="http://127.0.0.1:9/v1|http://127.0.0.1:10/v1"')
    assert base.fingerprint == patient.fingerprint == mirrored.fingerprint


def test_a_failing_base_url_fails_over_to_a_mirror_at_once(tmp_path: Path) -> None:
    with FakeOpenAIServer(always="server_error") as primary, FakeOpenAIServer() as mirror:
        model = served(primary, None, f",mirrors={mirror.base_url},concurrency=1,backoff=5,max_backoff=5")
        started = time.perf_counter()
        texts = model.generate(requests_for(tmp_path, 3), Decoding(), None)
        took = time.perf_counter() - started
    assert len(texts) == 3 and mirror.served == 3
    assert len(primary.requests) == 1  # the mirror that answered is asked first from then on
    assert took < 5  # moving to a mirror not yet tried waits no backoff


def test_a_rerun_against_another_mirror_sends_only_the_missing_requests(tmp_path: Path) -> None:
    requests = requests_for(tmp_path, 4)
    cache = tmp_path / "cache"
    with FakeOpenAIServer() as gone:
        dead = gone.base_url  # nothing listens there any more
    with FakeOpenAIServer(faults=["truncated"]) as primary:
        with pytest.raises(AbductError, match=r"1 of 4 requests failed .*gave up after 2 tries over 2 URLs"):
            served(primary, cache, f",mirrors={dead},concurrency=1,retries=1").generate(requests, Decoding(), None)
        assert primary.served == 3
        first = served(primary, cache, f",mirrors={dead}").fingerprint
    with FakeOpenAIServer() as mirror:  # the base URL is down now too: a new mirror serves
        model = served(primary, cache, f",mirrors={mirror.base_url},concurrency=1")
        texts = model.generate(requests, Decoding(), None)
    assert len(texts) == 4 and mirror.served == 1 and len(mirror.requests) == 1
    assert model.fingerprint == first


def test_a_mirror_that_is_not_an_http_url_is_one_line(server: FakeOpenAIServer) -> None:
    with pytest.raises(AbductError, match=r"^openai:fake: mirrors 'ftp://x' is not an http\(s\) URL$"):
        served(server, None, f',mirrors="{server.base_url} ftp://x"')


@pytest.mark.parametrize("fault", ["oversized", "oversized_stream"])
def test_a_reply_over_the_size_cap_is_refused_in_one_line(fault: str, tmp_path: Path) -> None:
    with FakeOpenAIServer(faults=[fault]) as fake:
        model = served(fake, tmp_path / "cache", ",timeout=30")
        with pytest.raises(AbductError) as err:
            model.generate(requests_for(tmp_path, 1), Decoding(), None)
        assert len(fake.requests) == 1  # refused, not asked again
    assert "64 MiB cap; refused" in str(err.value) and "\n" not in str(err.value)
    assert not list((tmp_path / "cache").rglob("*.json"))


@pytest.mark.parametrize("entry", [None, "yes", 3, []])
def test_a_null_or_malformed_logprob_entry_is_one_line(entry: Any) -> None:
    """Found by the property test: a server answering ``"logprobs": {"content": [null]}``."""
    from abduct_vlm.served import ServedError, answer_logprob

    response = {"choices": [{"message": {"content": "No"}, "logprobs": {"content": [entry]}}]}
    with pytest.raises(ServedError, match="returned no logprobs"):
        answer_logprob(response, "yes", "http://server")


@pytest.mark.parametrize("status", [400, 429, 503])
def test_a_probe_refused_as_a_bad_request_only_means_no_fingerprint(status: int, tmp_path: Path) -> None:
    """A model that refuses ``max_tokens`` (400), a busy server (429, 503): the run goes on, unchanged."""
    with FakeOpenAIServer(system_fingerprint="fp-a", ping_status=status) as fake:
        model = served(fake, None)
        texts = model.generate(requests_for(tmp_path, 2), Decoding(), None)
    assert len(texts) == 2 and fake.pings == 1 and fake.served == 2
    assert model.usage["requests"] == 2 and "probe" not in model.describe_inputs()["served"]


@pytest.mark.parametrize("status", [401, 404, 500])
def test_a_probe_refused_for_good_fails_in_one_line_before_the_run(status: int, tmp_path: Path) -> None:
    with FakeOpenAIServer(ping_status=status) as fake:
        with pytest.raises(AbductError, match=rf"chat/completions refused the probe: HTTP {status} \(fake server "
                                              rf"error {status}\); nothing was sent"):
            served(fake, None).generate(requests_for(tmp_path, 2), Decoding(), None)
    assert fake.pings == 1 and fake.requests == []


def test_the_probe_names_the_snapshot_and_is_kept_out_of_the_ledger(tmp_path: Path) -> None:
    with FakeOpenAIServer(model_id="m", system_fingerprint="fp-a") as fake:
        model = served(fake, None)
        before = model.fingerprint
        model.generate(requests_for(tmp_path, 2), Decoding(), None)
        assert model.usage == {"requests": 2, "cached": 0, **fake.tokens}  # what the server counted, less the probe
        assert model.describe_inputs()["served"]["probe"] == {"requests": 1, **fake.ping_tokens}
        fake.system_fingerprint = "fp-b"
        assert served(fake, None).fingerprint != before  # another snapshot: another model
