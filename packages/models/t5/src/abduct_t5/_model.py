"""The ``t5`` model: reads only the input's context (the clue) and

- **scores** a text by its token log-likelihood given the prompt ``template`` filled with the
  context (``reduce=mean``: the mean over the text's tokens, ``</s>`` included, i.e. minus
  transformers' per-example loss; ``reduce=sum``: the total);
- **generates** a text from the same prompt, with the run's decoding options.

Batched and padded; each distinct context is encoded once per call and its encoder states are
shared by every text scored against it (so a ``score_matrix`` costs one encoder pass per
context); ``torch.inference_mode``; bfloat16 autocast on CUDA.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import torch
from transformers.modeling_outputs import BaseModelOutput

from abduct import AbductError, Decoding, GenerationRequest, Settings, Spec, TextPool, VisualInput
from abduct_modelkit import is_small_on_cpu, one_thread_if, torch_seeded
from abduct_t5._loading import DEFAULT_TEMPLATE, Loaded, load, tokenizer_hash, weights_hash

MAX_SOURCE_TOKENS = 512
MAX_TARGET_TOKENS = 512


def autocast(device: torch.device) -> contextlib.AbstractContextManager[Any]:
    """bfloat16 autocast on CUDA; nothing on the CPU."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def threads_for(net: torch.nn.Module, device: torch.device) -> contextlib.AbstractContextManager[None]:
    """One CPU thread for a small network (``t5:tiny``; ``abduct_modelkit.one_thread_if``)."""
    return one_thread_if(is_small_on_cpu(net, device))


def check_template(template: str) -> str:
    if "{context}" not in template:
        raise AbductError(f"t5: template '{template}' has no {{context}} placeholder (e.g. 'clue: {{context}}')")
    return template


def fill(template: str, context: str) -> str:
    return template.replace("{context}", context)


class T5Model:
    """T5 over context text only (``accepts = needs = {"context"}``)."""

    accepts = frozenset({"context"})
    needs = frozenset({"context"})

    def __init__(self, loaded: Loaded, *, device: str = "cpu", batch_size: int = 64, template: str | None = None,
                 reduce: Literal["mean", "sum"] = "mean", name: str = "t5") -> None:
        self.device = torch.device(device)
        self.model: Any = loaded.model
        self.model.to(self.device).eval()
        self.tokenizer = loaded.tokenizer
        self.template = check_template(template or loaded.template or DEFAULT_TEMPLATE)
        self.reduce = reduce
        self.batch_size = max(1, int(batch_size))
        self.name = name
        self.fingerprint = (f"t5|weights={weights_hash(self.model)}|tokenizer={tokenizer_hash(self.tokenizer)}"
                            f"|template={self.template}|reduce={reduce}")

    # -- inputs ------------------------------------------------------------------------------
    def source(self, visual: VisualInput) -> str:
        if visual.context is None:
            raise AbductError(f"model '{self.name}' reads the input's context (e.g. Sherlock's clue), "
                              "and an input has none")
        return fill(self.template, visual.context)

    def _tokens(self, texts: Sequence[str], limit: int) -> dict[str, torch.Tensor]:
        batch = self.tokenizer(list(texts), padding=True, truncation=True, max_length=limit, return_tensors="pt")
        return {"input_ids": batch["input_ids"].to(self.device), "attention_mask": batch["attention_mask"].to(self.device)}

    # -- scoring -----------------------------------------------------------------------------
    def _log_likelihoods(self, sources: Sequence[str], owner: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """Log-likelihood (reduced) of ``texts[i]`` given ``sources[owner[i]]``; each source is
        encoded once, in groups of ``batch_size``; pairs are decoded ``batch_size`` at a time,
        longest texts together."""
        out = np.zeros(len(texts), dtype=np.float64)
        start_id = int(self.model.config.decoder_start_token_id or 0)
        with torch.inference_mode(), autocast(self.device), threads_for(self.model, self.device):
            for first in range(0, len(sources), self.batch_size):
                group = np.flatnonzero((owner >= first) & (owner < first + self.batch_size))
                if not len(group):
                    continue
                encoded = self._tokens(sources[first : first + self.batch_size], MAX_SOURCE_TOKENS)
                states = self.model.get_encoder()(**encoded).last_hidden_state
                lengths = np.array([len(texts[int(i)]) for i in group])
                group = group[np.argsort(-lengths, kind="stable")]
                for s in range(0, len(group), self.batch_size):
                    part = group[s : s + self.batch_size]
                    rows = torch.as_tensor(owner[part] - first, device=self.device)
                    labels = self._tokens([texts[i] for i in part], MAX_TARGET_TOKENS)
                    ids, mask = labels["input_ids"], labels["attention_mask"]
                    decoder_input = torch.cat([torch.full_like(ids[:, :1], start_id), ids[:, :-1]], dim=1)
                    logits = self.model(
                        encoder_outputs=BaseModelOutput(last_hidden_state=states[rows]),
                        attention_mask=encoded["attention_mask"][rows], decoder_input_ids=decoder_input,
                        decoder_attention_mask=mask,
                    ).logits
                    logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
                    total = (logp * mask).sum(dim=1)
                    values = total / mask.sum(dim=1).clamp(min=1) if self.reduce == "mean" else total
                    out[part] = values.double().cpu().numpy()
        return out

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        if len(visuals) != len(texts):
            raise ValueError("score() needs as many visuals as texts")
        index: dict[str, int] = {}
        owner = np.array([index.setdefault(self.source(v), len(index)) for v in visuals], dtype=np.int64)
        return self._log_likelihoods(list(index), owner, list(texts))

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        sources = [self.source(v) for v in visuals]
        owner = np.repeat(np.arange(len(sources)), len(texts))
        flat = self._log_likelihoods(sources, owner, [t for _ in sources for t in texts])
        return flat.reshape(len(sources), len(texts))

    # -- generation --------------------------------------------------------------------------
    def generation_kwargs(self, decoding: Decoding) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"max_new_tokens": decoding.max_new_tokens, "num_beams": decoding.num_beams,
                                  "do_sample": decoding.do_sample}
        if decoding.do_sample:
            kwargs.update(temperature=decoding.temperature, top_p=decoding.top_p, top_k=0)
        return kwargs

    def _generate(self, sources: Sequence[str], kwargs: dict[str, Any]) -> list[str]:
        encoded = self._tokens(sources, MAX_SOURCE_TOKENS)
        with torch.inference_mode(), autocast(self.device), threads_for(self.model, self.device):
            made = self.model.generate(**encoded, **kwargs)
        return [t.strip() for t in self.tokenizer.batch_decode(made, skip_special_tokens=True)]

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        """Greedy and beam search run batched (padding is masked, so a text does not depend
        on its batch); sampling runs one request at a time, seeded by ``decoding.seed_for``."""
        sources = [self._request_source(r) for r in requests]
        kwargs = self.generation_kwargs(decoding)
        if not sources:
            return []
        if not decoding.do_sample:
            return self._generate(sources, kwargs)
        texts = []
        for request, source in zip(requests, sources):
            with torch_seeded(decoding.seed_for(f"{request.visual.key(portable=True)}\x00{request.prompt or ''}")):
                texts.extend(self._generate([source], kwargs))
        return texts

    def _request_source(self, request: GenerationRequest) -> str:
        source = self.source(request.visual)
        return f"{request.prompt} {source}" if request.prompt else source


def make_t5(spec: Spec, settings: Settings, *, template: str | None = None,
            reduce: Literal["mean", "sum"] = "mean") -> T5Model:
    """``t5:tiny``, ``t5:DIR`` (a Hugging Face directory, e.g. best/ of ``abduct train t5``) or
    ``t5:NAME`` (a hub name), ``[,template="clue: {context}"][,reduce=mean|sum]``. The template
    defaults to the one the checkpoint was trained with, else ``clue: {context}``."""
    if spec.tag is not None:
        raise AbductError(f"t5 takes no @tag (got '@{spec.tag}'); name the model as t5:DIR or t5:NAME")
    if template is not None:
        check_template(template)
    loaded = load(spec.argument)
    return T5Model(loaded, device=settings.torch_device(), batch_size=settings.batch_size, template=template,
                   reduce=reduce, name=str(Spec(spec.name, spec.argument)))
