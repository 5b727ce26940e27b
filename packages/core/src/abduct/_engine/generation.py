"""The generation engine: the one place where models generate.

Like scoring, it checks inputs against what the model accepts, generates each identical
request (input, prompt, decoding options, text pool) once, in batches, with a progress bar,
counts the model's time, and keeps the texts in a content-addressed cache, so a second run
of the same requests costs no model call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from abduct._engine.scoring import ModelCalls
from abduct.contract.errors import AbductError
from abduct.contract.protocols import Decoding, Generator, TextPool
from abduct.contract.records import GenerationRequest
from abduct.kit.cache import TextCache
from abduct.kit.content import unique_index


class GenerationEngine(ModelCalls):
    def __init__(self, model: object, *, decoding: Decoding | None = None, batch_size: int = 16,
                 cache: TextCache | None = None, **shared: Any) -> None:
        if not isinstance(model, Generator):
            raise AbductError(f"{type(model).__name__} does not generate (no generate method)")
        super().__init__(model, batch_size=batch_size, **shared)
        self.model: Generator = model
        self.decoding = decoding or Decoding()
        self.cache = cache

    def _cache_key(self, request: GenerationRequest, pool: TextPool | None) -> str:
        parts = [self.keys.visual(request.visual), request.prompt or "", self.decoding.describe(),
                 pool.digest if pool is not None else ""]
        return hashlib.sha256("\x00".join(["g", *parts]).encode()).hexdigest()

    def generate(self, requests: Sequence[GenerationRequest], pool: TextPool | None = None) -> list[str]:
        """One text per request, in order; identical requests are generated once."""
        prepared = [GenerationRequest(self.policy.prepare(r.visual), r.prompt) for r in requests]
        unique, inverse = unique_index(prepared)
        keys = [self._cache_key(r, pool) for r in unique] if self.cache is not None else []
        texts: list[str | None] = self.cache.get(keys) if self.cache is not None else [None] * len(unique)
        todo = self._agreed_todo([i for i, text in enumerate(texts) if text is None])
        batches = [todo[i : i + self.batch_size] for i in range(0, len(todo), self.batch_size)]

        def run(batch: list[int]) -> list[str]:
            chunk = [unique[i] for i in batch]
            made = self._timed(lambda: np.array(self.model.generate(chunk, self.decoding, pool), dtype=object))
            if made.shape != (len(batch),) or not all(isinstance(t, str) for t in made):
                raise AbductError(f"the model returned {made.shape[0] if made.ndim else 'no'} texts "
                                  f"for {len(batch)} requests (expected one string each)")
            if self.cache is not None:
                self.cache.put([keys[i] for i in batch], [str(t) for t in made])
            return [str(t) for t in made]

        for batch, made in zip(batches, self._each_batch(batches, run, "generating")):
            for i, text in zip(batch, made):
                texts[i] = text
        return [str(texts[i]) for i in inverse]


