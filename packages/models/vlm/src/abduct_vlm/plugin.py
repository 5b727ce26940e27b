"""abduct plugin: registrations only; no torch or transformers import here."""

from __future__ import annotations

from collections.abc import Iterator

from abduct import Registration, hookimpl


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration(
        "vlm",
        "A Hugging Face image-text-to-text model (LLaVA, Qwen2-VL, Idefics, ...): generates from prompt + images, "
        "scores by log-likelihood; vlm:DIR, vlm:NAME, vlm:tiny",
        "abduct_vlm._model:make_vlm",
    )
    yield Registration(
        "openai",
        "A model behind an OpenAI-compatible chat-completions endpoint: openai:MODEL,base_url=URL "
        "(generates; scores when the server returns logprobs)",
        "abduct_vlm.served:make_openai",
    )
