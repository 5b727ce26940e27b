"""The scoring engine: the one place where models are called.

It deduplicates inputs (each unique visual and each unique text is encoded or scored once),
batches calls, uses the fastest path a model offers (dual encoder, score matrix, pairwise)
and keeps embeddings in a content-addressed cache.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import numpy as np

from abduct.cache import EmbeddingCache
from abduct.errors import AbductError
from abduct.progress import progress
from abduct.protocols import DualEncoder, MatrixScorer, Scorer
from abduct.records import VisualInput

K = TypeVar("K", bound=Hashable)


def unique_index(items: Sequence[K]) -> tuple[list[K], np.ndarray]:
    """Unique items in first-seen order and, for each item, its position among them."""
    position: dict[K, int] = {}
    inverse = np.empty(len(items), dtype=np.int64)
    for i, item in enumerate(items):
        inverse[i] = position.setdefault(item, len(position))
    return list(position), inverse


class ScoringEngine:
    """Scores (visual, text) pairs and matrices with ``model``, counting its own time."""

    def __init__(
        self,
        model: object,
        *,
        batch_size: int = 64,
        cache: EmbeddingCache | None = None,
        quiet: bool = False,
    ) -> None:
        if not isinstance(model, (Scorer, MatrixScorer, DualEncoder)):
            raise AbductError(f"{type(model).__name__} is not a scorer (no score/score_matrix/encode methods)")
        self.model = model
        self.batch_size = max(1, int(batch_size))
        self.cache = cache
        self.quiet = quiet
        self.model_seconds = 0.0
        self._file_hashes: dict[tuple[str, int, int], str] = {}

    @property
    def is_dual_encoder(self) -> bool:
        return isinstance(self.model, DualEncoder)

    def _timed(self, fn: Callable[[], np.ndarray]) -> np.ndarray:
        start = time.perf_counter()
        try:
            return np.asarray(fn())
        finally:
            self.model_seconds += time.perf_counter() - start

    # -- content keys for the cache ------------------------------------------------------
    def _file_hash(self, path: str) -> str:
        try:
            st = os.stat(path)
        except OSError:
            return "missing:" + path  # the model will raise a clear error when it reads it
        key = (path, st.st_size, st.st_mtime_ns)
        if key not in self._file_hashes:
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                while block := handle.read(1 << 20):
                    digest.update(block)
            self._file_hashes[key] = digest.hexdigest()
        return self._file_hashes[key]

    def _visual_content_key(self, visual: VisualInput) -> str:
        parts = [self._file_hash(visual.image), visual.key().partition("|")[2]]
        parts.extend(self._file_hash(p) for p in visual.related)
        return hashlib.sha256("\x00".join(["v", *parts]).encode()).hexdigest()

    @staticmethod
    def _text_content_key(text: str) -> str:
        return hashlib.sha256(("t\x00" + text).encode()).hexdigest()

    # -- encoding ------------------------------------------------------------------------
    def _encode_unique(
        self,
        items: Sequence[K],
        content_key: Callable[[K], str],
        encode: Callable[[list[K]], np.ndarray],
        desc: str,
    ) -> np.ndarray:
        keys = [content_key(item) for item in items] if self.cache is not None else []
        cached = self.cache.get(keys) if self.cache is not None else [None] * len(items)
        todo = [i for i, vec in enumerate(cached) if vec is None]
        batches = [todo[i : i + self.batch_size] for i in range(0, len(todo), self.batch_size)]
        fresh: dict[int, np.ndarray] = {}
        for batch in progress(batches, desc=desc, quiet=self.quiet or len(batches) < 2, unit="batch"):
            vectors = self._timed(lambda b=batch: encode([items[i] for i in b]))  # type: ignore[misc]
            if vectors.ndim != 2 or vectors.shape[0] != len(batch):
                raise AbductError(f"{desc}: the model returned shape {vectors.shape} for {len(batch)} inputs")
            if self.cache is not None:
                self.cache.put([keys[i] for i in batch], vectors)
            fresh.update(zip(batch, vectors))
        rows = [fresh[i] if vec is None else vec for i, vec in enumerate(cached)]
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack(rows)

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        """Embeddings of ``visuals`` (dual encoders only); duplicates are encoded once."""
        model = self.model
        assert isinstance(model, DualEncoder)
        unique, inverse = unique_index(list(visuals))
        table = self._encode_unique(unique, self._visual_content_key, model.encode_visual, "encoding images")
        return table[inverse] if len(unique) else table

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` (dual encoders only); duplicates are encoded once."""
        model = self.model
        assert isinstance(model, DualEncoder)
        unique, inverse = unique_index(list(texts))
        table = self._encode_unique(unique, self._text_content_key, model.encode_text, "encoding texts")
        return table[inverse] if len(unique) else table

    # -- scoring -------------------------------------------------------------------------
    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        """The ``len(visuals) x len(texts)`` matrix of scores."""
        uv, v_inv = unique_index(list(visuals))
        ut, t_inv = unique_index(list(texts))
        if not uv or not ut:
            return np.zeros((len(visuals), len(texts)))
        model = self.model
        if isinstance(model, DualEncoder):
            v = self.encode_visual(uv)
            t = self.encode_text(ut)
            matrix = v.astype(np.float32, copy=False) @ t.astype(np.float32, copy=False).T
        elif isinstance(model, MatrixScorer):
            matrix = self._timed(lambda: model.score_matrix(uv, ut))
        else:
            rows = np.repeat(np.arange(len(uv)), len(ut))
            cols = np.tile(np.arange(len(ut)), len(uv))
            matrix = self._score_unique_pairs(uv, ut, rows, cols).reshape(len(uv), len(ut))
        full: np.ndarray = np.asarray(matrix, dtype=np.float64)[np.ix_(v_inv, t_inv)]
        return full

    def score_pairs(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        """Scores of ``(visuals[i], texts[i])`` for every i."""
        if len(visuals) != len(texts):
            raise ValueError("score_pairs needs as many visuals as texts")
        uv, v_inv = unique_index(list(visuals))
        ut, t_inv = unique_index(list(texts))
        if not len(visuals):
            return np.zeros(0)
        if isinstance(self.model, DualEncoder):
            v = self.encode_visual(uv)[v_inv]
            t = self.encode_text(ut)[t_inv]
            dots: np.ndarray = np.einsum("ij,ij->i", v.astype(np.float64), t.astype(np.float64))
            return dots
        pairs, pair_inv = unique_index(list(zip(v_inv.tolist(), t_inv.tolist())))
        rows = np.array([p[0] for p in pairs])
        cols = np.array([p[1] for p in pairs])
        scores: np.ndarray = self._score_unique_pairs(uv, ut, rows, cols)[pair_inv]
        return scores

    def _score_unique_pairs(
        self, uv: list[VisualInput], ut: list[str], rows: np.ndarray, cols: np.ndarray
    ) -> np.ndarray:
        model = self.model
        if not isinstance(model, Scorer):
            raise AbductError(f"{type(model).__name__} offers no pairwise score()")
        out = np.empty(len(rows))
        starts = range(0, len(rows), self.batch_size)
        for s in progress(starts, desc="scoring pairs", quiet=self.quiet or len(starts) < 2, unit="batch"):
            r, c = rows[s : s + self.batch_size], cols[s : s + self.batch_size]
            scores = self._timed(lambda r=r, c=c: model.score([uv[i] for i in r], [ut[j] for j in c]))  # type: ignore[misc]
            if scores.shape != (len(r),):
                raise AbductError(f"the model returned shape {scores.shape} for {len(r)} pairs")
            out[s : s + len(r)] = scores
        return out
