"""``retrieve:<scoring model>``: the retrieval baseline of generation tasks (a baseline like
``random``, built from the scoring model it names).

It writes nothing: for each request it returns the text of the task's pool (``TextPool``,
e.g. the training split's captions or sentences) that the scoring model scores highest for the
request's visual input; ties go to the text that comes first in the pool. Any scoring model
works (``retrieve:clip:tiny``, ``retrieve:"clip:ViT-B-16@openai,mode=plain"`` with the inner
spec's options quoted); a dual encoder encodes the pool once per run, not once per batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from abduct._declare.traits import model_traits
from abduct._engine.models import LoadedModel, engine_for, load_model
from abduct._registry.registry import Registry
from abduct.contract import AbductError, Decoding, GenerationRequest, Settings, Spec, TextPool
from abduct.contract.records import FEATURES


class Retriever:
    """Generates by choosing: the pool text the inner scoring model ranks first."""

    def __init__(self, inner: LoadedModel, batch_size: int = 64) -> None:
        if not inner.scores:
            raise AbductError(f"retrieve: model '{inner.spec}' does not score texts")
        self.inner = inner
        traits = model_traits(inner.model, str(inner.spec))
        self.accepts: frozenset[str] = traits.accepts
        self.needs: frozenset[str] = traits.needs
        self.fingerprint = f"retrieve({inner.fingerprint})"
        # inputs reach it already trimmed by the generation engine's policy, for these accepts
        engine = engine_for(inner, Settings(batch_size=batch_size), optional_inputs=FEATURES, use_cache=False).scoring
        assert engine is not None
        self.engine = engine
        self._pool_embeddings: dict[str, np.ndarray] = {}

    def _scores(self, requests: Sequence[GenerationRequest], pool: TextPool) -> np.ndarray:
        visuals = [r.visual for r in requests]
        if not self.engine.is_dual_encoder:
            return self.engine.score_matrix(visuals, pool.texts)
        if pool.digest not in self._pool_embeddings:
            self._pool_embeddings[pool.digest] = self.engine.encode_text(pool.texts).astype(np.float32)
        scores: np.ndarray = self.engine.encode_visual(visuals).astype(np.float32) @ self._pool_embeddings[pool.digest].T
        return scores

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        if pool is None or not pool.texts:
            raise AbductError("retrieve chooses from a pool of texts, and this task offers none")
        best = np.argmax(self._scores(requests, pool), axis=1)  # argmax: the first of tied maxima
        return [pool.texts[int(i)] for i in best]


def make_retrieve(spec: Spec, settings: Settings, registry: Registry) -> Retriever:
    """``retrieve:<model spec>``; an inner spec with options is quoted: ``retrieve:"clip:x,mode=plain"``."""
    if spec.argument is None:
        raise AbductError("retrieve needs the scoring model to retrieve with, e.g. retrieve:clip:tiny")
    inner = spec.argument + (f"@{spec.tag}" if spec.tag is not None else "")
    return Retriever(load_model(inner, settings, registry), batch_size=settings.batch_size)
