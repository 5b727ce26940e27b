"""The generation engine: the one place where models generate.

Like scoring, it checks inputs against what the model accepts, generates each identical
request (input, prompt, decoding options, text pool) once, in batches, with a progress bar,
counts the model's time, and keeps the texts in a content-addressed cache, so a second run
of the same requests costs no model call. The cache keeps what the model returned (raw: a
served reply's ``reasoning_content`` beside its content); a model's ``reasoning`` option
(``abduct.kit.reasoning``) splits answer from reasoning on the way out, so a rerun with another
``reasoning=`` reuses the cached replies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from abduct._engine.scoring import ModelCalls
from abduct.contract.errors import AbductError
from abduct.contract.protocols import Decoding, Generator, TextPool
from abduct.contract.records import GenerationRequest
from abduct.kit.cache import TextCache
from abduct.kit.content import unique_index
from abduct.kit.reasoning import Reasoning, ServedReply


def _media(request: GenerationRequest) -> str:
    """The files a request shows (its image or video and its related inputs'), without the texts."""
    visual = request.visual
    return "\x00".join(str(v.media) for v in (visual, *visual.related))


class GenerationEngine(ModelCalls):
    def __init__(self, model: object, *, decoding: Decoding | None = None, batch_size: int = 16,
                 cache_dir: Path | None = None, fingerprint: str = "", **shared: Any) -> None:
        """With ``cache_dir``, texts are cached there under the model's ``fingerprint`` (what it is)."""
        if not isinstance(model, Generator):
            raise AbductError(f"{type(model).__name__} does not generate (no generate method)")
        super().__init__(model, batch_size=batch_size, **shared)
        self.model: Generator = model
        self.decoding = decoding or Decoding()
        if cache_dir is not None and not fingerprint:
            raise AbductError("a generation cache needs the model's fingerprint")
        self.cache = TextCache(cache_dir, fingerprint) if cache_dir is not None else None
        reasoning = getattr(model, "reasoning", None)  # generating models declare reasoning=; others have none
        self.reasoning = reasoning if isinstance(reasoning, Reasoning) else None

    def _cache_key(self, request: GenerationRequest, pool: TextPool | None) -> str:
        parts = [self.keys.visual(request.visual), request.prompt or "", self.decoding.describe(),
                 pool.digest if pool is not None else ""]
        return hashlib.sha256("\x00".join(["g", *parts]).encode()).hexdigest()

    def generate(self, requests: Sequence[GenerationRequest], pool: TextPool | None = None) -> list[str]:
        """One text per request, in order; identical requests are generated once."""
        prepared = [GenerationRequest(self.policy.prepare(r.visual), r.prompt) for r in requests]
        unique, inverse = unique_index(prepared)

        def run(chunk: list[GenerationRequest]) -> list[str]:
            made = self._timed(lambda: self.model.generate(chunk, self.decoding, pool), "generate", numeric=False)
            if made.ndim != 1 or made.shape[0] != len(chunk):
                if made.ndim == 0:  # None, or one string for a batch
                    count = type(made.item()).__name__
                else:
                    count = f"{made.shape[0]} texts" if made.ndim == 1 else f"an array of shape {made.shape}"
                raise self.fault(f"returned {count} from generate for {len(chunk)} requests (expected one string each)")
            wrong = next((i for i, text in enumerate(made) if not isinstance(text, str)), None)
            if wrong is not None:
                raise self.fault(f"returned {type(made[wrong]).__name__} from generate for request {wrong + 1} of "
                                 f"{len(chunk)} (expected one string each)")
            return [t if isinstance(t, ServedReply) else str(t) for t in made]

        group_by = _media if getattr(self.model, "group_media", False) is True else None
        texts = self._through_cache(unique, self.cache, lambda r: self._cache_key(r, pool), run, "generating", group_by)
        if self.reasoning is not None:  # a Reply (a str) with its reasoning
            texts = [self.reasoning.split(t) for t in texts]
        else:
            texts = [str(t) for t in texts]
        return [texts[i] for i in inverse]
