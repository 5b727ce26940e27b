"""The token ledger's inputs: a served model's ``usage`` (what the server's answers say they cost,
cached answers apart) and a local VLM's (the prompt and generated tokens it counted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from abduct import Decoding, GenerationRequest, Settings, Spec, VisualInput
from abduct.host import build_registry, load_model
from abduct_testing import make_images
from abduct_vlm.served import ServedModel
from abduct_vlm.testing import FakeOpenAIServer


def _served(server: FakeOpenAIServer, cache: Path) -> ServedModel:
    model: ServedModel = load_model(f"openai:fake,base_url={server.base_url},cache_dir={cache}", Settings(),
                                    build_registry()).model
    return model


def _requests(tmp_path: Path, n: int) -> list[GenerationRequest]:
    return [GenerationRequest(VisualInput(str(p)), f"Describe picture {i} in words.")
            for i, p in enumerate(make_images(tmp_path / "images", n))]


def test_served_usage_is_the_servers_and_cached_answers_cost_nothing(tmp_path: Path) -> None:
    def thinking(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": "a red square", "reasoning_content": "it looks red to me"}

    requests = _requests(tmp_path, 3)
    with FakeOpenAIServer(reply=thinking) as server:
        model = _served(server, tmp_path / "c")
        model.generate(requests, Decoding(), None)
        assert model.usage == {"requests": 3, "cached": 0, "prompt": server.tokens["prompt"],
                               "completion": 3 * (3 + 5), "reasoning": 3 * 5}
        assert server.tokens["completion"] == 3 * 8
        model.generate(requests, Decoding(), None)  # answered from the response cache
        assert model.usage["requests"] == 3 and model.usage["cached"] == 3
        assert model.usage["completion"] == 24 and server.served == 3


def test_a_server_without_usage_counts_requests_and_no_tokens(tmp_path: Path) -> None:
    with FakeOpenAIServer(usage=False) as server:
        model = _served(server, tmp_path / "c")
        model.generate(_requests(tmp_path, 2), Decoding(), None)
    assert model.usage == {"requests": 2, "cached": 0, "prompt": 0, "completion": 0, "reasoning": 0}


def test_a_local_vlm_counts_its_prompt_and_generated_tokens(tmp_path: Path) -> None:
    model: Any = build_registry().create("model", Spec("vlm", "tiny-llava"), Settings(batch_size=4))
    before = dict(model.usage)
    texts = model.generate(_requests(tmp_path, 2), Decoding(max_new_tokens=3), None)
    spent = {k: model.usage[k] - before[k] for k in before}
    assert len(texts) == 2 and spent["requests"] == 2
    assert 1 <= spent["completion"] <= 2 * 3  # at most max_new_tokens a request, padding not counted
    assert spent["prompt"] > 2 * 5  # every prompt's tokens (the images' too), padding not counted
