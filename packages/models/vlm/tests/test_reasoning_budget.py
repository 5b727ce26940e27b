"""A reasoning budget apart from ``max_new_tokens``: ``vlm`` generates in two phases (the reasoning
for at most N tokens, its closing tag forced, then the answer for its own ``max_new_tokens``);
``openai`` sends the budget as the server's documented request field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from abduct import AbductError, Decoding, GenerationRequest, Settings, Spec, VisualInput
from abduct.host import build_registry, load_model
from abduct.kit.reasoning import Reasoning
from abduct_testing import make_images
from abduct_vlm.testing import FakeOpenAIServer

BUDGET, ANSWER = 5, 7


def _thinking_qwen(budget: int | None) -> Any:
    """``vlm:tiny-qwen2-vl`` whose chat template opens ``<think>`` after the assistant's turn, as
    Qwen3's and DeepSeek-R1's templates do: the random model then 'reasons' until it is stopped."""
    spec = "tiny-qwen2-vl" + (f",reasoning_budget={budget}" if budget else "")
    model: Any = load_model(f"vlm:{spec}", Settings(batch_size=4), build_registry()).model
    model.processor.chat_template = model.processor.chat_template.replace("assistant\n", "assistant\n<think>")
    return model


def _greedy(model: Any, batch: Any, n: int) -> torch.Tensor:
    with torch.inference_mode():
        made = model.model.generate(**batch, max_new_tokens=n, do_sample=False, pad_token_id=0)
    return made[0, batch["input_ids"].shape[1] :]


def _by_hand(model: Any, request: GenerationRequest) -> tuple[str, int]:
    """What the budget means, with ``model.generate`` called directly on one request: BUDGET tokens
    of reasoning, ``</think>`` appended, then ANSWER tokens (fewer where it ends); the text and the
    number of tokens in it."""
    images = model.images(request.visual)
    batch = model._encode([model.chat(model.prompts.generation(request.visual, request.prompt), len(images))], [images])
    thought = _greedy(model, batch, BUDGET)
    closing = torch.tensor(model.tokenizer("</think>", add_special_tokens=False)["input_ids"])
    added = torch.cat([thought, closing]).unsqueeze(0)
    batch["input_ids"] = torch.cat([batch["input_ids"], added], dim=1)
    batch["attention_mask"] = torch.ones_like(batch["input_ids"])
    batch["mm_token_type_ids"] = torch.cat([batch["mm_token_type_ids"], torch.zeros_like(added)], dim=1)
    answer = _greedy(model, batch, ANSWER)
    reply = torch.cat([thought, closing, answer])
    text: str = model.tokenizer.decode(reply, skip_special_tokens=True)
    return text.strip(), int((reply != 0).sum())  # padding (id 0) after an ended answer left out


def test_a_local_reasoning_budget_forces_the_closing_tag_and_the_answer_gets_its_own_tokens(tmp_path: Path) -> None:
    asked = ["What is it?", "What is shown in this picture, and why?"]  # unequal lengths: left padding
    requests = [GenerationRequest(VisualInput(str(p)), q) for q, p in zip(asked, make_images(tmp_path / "images", 2))]
    split = Reasoning("auto")
    plain = _thinking_qwen(None)
    unbudgeted = plain.generate(requests, Decoding(max_new_tokens=ANSWER), None)
    assert not any("</think>" in t for t in unbudgeted)  # without a budget: cut off inside the reasoning
    cut = [split.split(t) for t in unbudgeted]  # the template opened it: unfinished, never read as an answer
    assert all(not r.finished and str(r) == "" for r in cut), [(str(r), r.finished) for r in cut]

    model = _thinking_qwen(BUDGET)
    before = dict(model.usage)
    texts = model.generate(requests, Decoding(max_new_tokens=ANSWER), None)
    expected = [_by_hand(model, r) for r in requests]
    assert texts == [text for text, _ in expected]  # batched and left-padded: as one at a time
    replies = [split.split(t) for t in texts]
    assert all(r.finished and r.reasoning and str(r) for r in replies)
    spent = {k: model.usage[k] - before[k] for k in before}
    assert spent["requests"] == 2 and spent["reasoning"] == 2 * BUDGET
    assert spent["completion"] == sum(n for _, n in expected)  # each reply's tokens, the forced tag included
    assert model.describe_inputs()["reasoning"] == {"budget": BUDGET, "closing": "</think>"}
    assert "reasoning_budget=5" in model.fingerprint and "reasoning_budget" not in plain.fingerprint


def test_a_reasoning_budget_without_a_tag_to_close_is_one_line() -> None:
    for option in ("reasoning=none", "reasoning=A:(.*)"):
        with pytest.raises(AbductError, match="reasoning_budget needs a closing tag"):
            build_registry().create("model", Spec.parse(f"vlm:tiny,{option},reasoning_budget=8"), Settings())


def _served_body(tmp_path: Path, options: str, decoding: Decoding) -> dict[str, Any]:
    with FakeOpenAIServer() as server:
        model: Any = load_model(f"openai:fake,base_url={server.base_url},cache=false{options}", Settings(),
                                build_registry()).model
        model.generate([GenerationRequest(VisualInput(str(make_images(tmp_path / "i", 1)[0])), "Is it red?")],
                       decoding, None)
        body: dict[str, Any] = server.requests[-1]
    return body


def test_a_served_reasoning_budget_and_effort_are_sent_apart_from_max_tokens(tmp_path: Path) -> None:
    body = _served_body(tmp_path, ",reasoning_budget=64,reasoning_effort=low", Decoding(max_new_tokens=12))
    assert body["max_tokens"] == 12 and body["thinking_token_budget"] == 64 and body["reasoning_effort"] == "low"
    plain = _served_body(tmp_path, "", Decoding(max_new_tokens=12))
    assert plain["max_tokens"] == 12 and "thinking_token_budget" not in plain and "reasoning_effort" not in plain


def test_a_served_reasoning_budget_is_recorded_and_names_the_model(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        registry = build_registry()
        budgeted: Any = load_model(f"openai:fake,base_url={server.base_url},reasoning_budget=64", Settings(), registry).model
        plain: Any = load_model(f"openai:fake,base_url={server.base_url}", Settings(), registry).model
        assert budgeted.describe_inputs()["reasoning"] == {"thinking_token_budget": 64}
        assert "reasoning" not in plain.describe_inputs()
        assert budgeted.fingerprint != plain.fingerprint  # another budget, other answers: not read from the cache
