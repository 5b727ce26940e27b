"""The scoring engine: the one place where models score.

It checks every input against what the model accepts (``abduct._declare.traits``), deduplicates
(each unique visual and each unique text is encoded or scored once), batches calls, uses
the fastest path a model offers (dual encoder, score matrix, pairwise) and derives the
others: pairs from ``score_matrix`` one visual at a time, a matrix from pairwise ``score``.
Embeddings go to a content-addressed cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from abduct._engine.inputs import InputPolicy
from abduct.contract.errors import AbductError
from abduct.contract.protocols import SCORING_PROTOCOLS, DualEncoder, MatrixScorer, Scorer
from abduct.contract.records import VisualInput
from abduct.kit.cache import EmbeddingCache
from abduct.kit.content import ContentKeys, unique_index
from abduct.kit.distributed import Ranks, gather_objects, shard_map
from abduct.kit.progress_bars import progress

K = TypeVar("K", bound=Hashable)
B = TypeVar("B")
R = TypeVar("R")


class Timer:
    """Seconds spent inside the model, shared by a run's engines."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def timed(self, fn: Callable[[], np.ndarray]) -> np.ndarray:
        start = time.perf_counter()
        try:
            return np.asarray(fn())
        finally:
            self.seconds += time.perf_counter() - start


class ModelCalls:
    """What both engines share: the model, its input policy, batching, the content keys of
    the caches, and the count and time of the model's calls (one timer per run)."""

    def __init__(
        self,
        model: object,
        *,
        batch_size: int,
        quiet: bool = False,
        policy: InputPolicy | None = None,
        keys: ContentKeys | None = None,
        timer: Timer | None = None,
        ranks: Ranks | None = None,
    ) -> None:
        self.model = model
        self.ranks = ranks or Ranks()
        self.batch_size = max(1, int(batch_size))
        self.quiet = quiet
        self.policy = policy or InputPolicy(model, type(model).__name__)
        self.keys = keys or ContentKeys()
        self.timer = timer or Timer()
        self.calls = 0

    def _timed(self, fn: Callable[[], np.ndarray]) -> np.ndarray:
        """One call of the model, timed; a score or an embedding that is NaN or infinite is
        refused here, where every task's numbers come from, rather than ranked as if it were one."""
        self.calls += 1
        out = self.timer.timed(fn)
        if isinstance(out, np.ndarray) and out.dtype.kind == "f" and not np.isfinite(out).all():
            bad = int(np.size(out) - np.isfinite(out).sum())
            raise AbductError(f"model '{self.policy.model_name}' returned {bad} non-finite value(s) (NaN or "
                              "infinity) among its scores or embeddings; they must be finite numbers")
        return out

    def _each_batch(self, batches: Sequence[B], compute: Callable[[B], R], desc: str, unit: str = "batch") -> list[R]:
        """``compute`` of every batch, in order, with a progress bar. Under torchrun the ranks
        split the batches (``abduct.kit.distributed.shard_map``) and all receive every result."""
        quiet = self.quiet or not self.ranks.is_main

        def bar(mine: Sequence[B]) -> Iterable[B]:
            return progress(mine, desc=desc, quiet=quiet or len(mine) < 2, unit=unit)

        return shard_map(batches, compute, self.ranks, bar)

    def _agreed_todo(self, todo: list[int]) -> list[int]:
        """The items some rank lacks in its cache: every rank computes (its share of) the same
        list, whatever each one's cache holds."""
        if self.ranks.world == 1:
            return todo
        return sorted(set().union(*gather_objects(todo, self.ranks)))


class ScoringEngine(ModelCalls):
    """Scores (visual, text) pairs and matrices with ``model``, counting its own time."""

    def __init__(self, model: object, *, batch_size: int = 64, cache: EmbeddingCache | None = None,
                 **shared: Any) -> None:
        if not isinstance(model, SCORING_PROTOCOLS):
            raise AbductError(f"{type(model).__name__} does not score (no score/score_matrix/encode methods)")
        super().__init__(model, batch_size=batch_size, **shared)
        self.cache = cache

    @property
    def model_seconds(self) -> float:
        return self.timer.seconds

    @property
    def is_dual_encoder(self) -> bool:
        return isinstance(self.model, DualEncoder)

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
        todo = self._agreed_todo([i for i, vec in enumerate(cached) if vec is None])
        batches = [todo[i : i + self.batch_size] for i in range(0, len(todo), self.batch_size)]

        def run(batch: list[int]) -> np.ndarray:
            vectors = self._timed(lambda: encode([items[i] for i in batch]))
            if vectors.ndim != 2 or vectors.shape[0] != len(batch):
                raise AbductError(f"{desc}: the model returned shape {vectors.shape} for {len(batch)} inputs")
            if self.cache is not None:
                self.cache.put([keys[i] for i in batch], vectors)
            return vectors

        fresh: dict[int, np.ndarray] = {}
        for batch, vectors in zip(batches, self._each_batch(batches, run, desc)):
            fresh.update(zip(batch, vectors))
        rows: list[np.ndarray] = []
        for i, vec in enumerate(cached):
            row = fresh.get(i, vec)
            assert row is not None  # every item missing from the cache was computed
            rows.append(row)
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack(rows)

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        """Embeddings of ``visuals`` (dual encoders only); duplicates are encoded once."""
        model = self.model
        assert isinstance(model, DualEncoder)
        unique, inverse = unique_index(self.policy.prepare_all(visuals))
        table = self._encode_unique(unique, self.keys.visual, model.encode_visual, "encoding images")
        return table[inverse] if len(unique) else table

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` (dual encoders only); duplicates are encoded once."""
        model = self.model
        assert isinstance(model, DualEncoder)
        unique, inverse = unique_index(list(texts))
        table = self._encode_unique(unique, self.keys.text, model.encode_text, "encoding texts")
        return table[inverse] if len(unique) else table

    # -- scoring -------------------------------------------------------------------------
    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        """The ``len(visuals) x len(texts)`` matrix of scores."""
        uv, v_inv = unique_index(self.policy.prepare_all(visuals))
        ut, t_inv = unique_index(list(texts))
        if not uv or not ut:
            return np.zeros((len(visuals), len(texts)))
        model = self.model
        if isinstance(model, DualEncoder):
            v = self.encode_visual(uv)
            t = self.encode_text(ut)
            matrix = v.astype(np.float32, copy=False) @ t.astype(np.float32, copy=False).T
        elif isinstance(model, MatrixScorer) and self.ranks.world == 1:
            matrix = self._timed(lambda: model.score_matrix(uv, ut))
        elif isinstance(model, MatrixScorer):  # under torchrun: the ranks split the visuals
            step = -(-len(uv) // self.ranks.world)
            parts = [uv[i : i + step] for i in range(0, len(uv), step)]
            matrix = np.concatenate(self._each_batch(
                parts, lambda part: self._timed(lambda: model.score_matrix(part, ut)), "scoring", "part"))
        else:
            rows = np.repeat(np.arange(len(uv)), len(ut))
            cols = np.tile(np.arange(len(ut)), len(uv))
            matrix = self._score_unique_pairs(uv, ut, rows, cols).reshape(len(uv), len(ut))
        full: np.ndarray = np.asarray(matrix, dtype=np.float64)[np.ix_(v_inv, t_inv)]
        return full

    def score_rows(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        """Scores of ``(visuals[i], texts[i])``, the cheap way for their shape: rows that cover
        most of the unique-visual x unique-text grid (Sherlock's retrieval chunks, one image's
        localization rows) are scored as one matrix (a dual encoder: one encoding per unique
        input and one product); sparse rows pairwise."""
        if not len(visuals):
            return np.zeros(0)
        uv, v_inv = unique_index(list(visuals))
        ut, t_inv = unique_index(list(texts))
        if 2 * len(visuals) >= len(uv) * len(ut):
            return np.asarray(self.score_matrix(uv, ut)[v_inv, t_inv])
        return self.score_pairs(visuals, texts)

    def score_pairs(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        """Scores of ``(visuals[i], texts[i])`` for every i."""
        if len(visuals) != len(texts):
            raise ValueError("score_pairs needs as many visuals as texts")
        uv, v_inv = unique_index(self.policy.prepare_all(visuals))
        ut, t_inv = unique_index(list(texts))
        if not len(visuals):
            return np.zeros(0)
        if isinstance(self.model, DualEncoder):
            v = self.encode_visual(uv)[v_inv]
            t = self.encode_text(ut)[t_inv]
            dots: np.ndarray = np.einsum("ij,ij->i", v.astype(np.float64), t.astype(np.float64))
            return dots
        pairs, pair_inv = unique_index(list(zip(v_inv.tolist(), t_inv.tolist())))
        rows = np.array([p[0] for p in pairs], dtype=np.int64)
        cols = np.array([p[1] for p in pairs], dtype=np.int64)
        scores: np.ndarray = self._score_unique_pairs(uv, ut, rows, cols)[pair_inv]
        return scores

    def _score_unique_pairs(
        self, uv: list[VisualInput], ut: list[str], rows: np.ndarray, cols: np.ndarray
    ) -> np.ndarray:
        model = self.model
        if not isinstance(model, Scorer):
            assert isinstance(model, MatrixScorer)
            return self._pairs_from_matrices(model, uv, ut, rows, cols)
        starts = list(range(0, len(rows), self.batch_size))

        def run(s: int) -> np.ndarray:
            r, c = rows[s : s + self.batch_size], cols[s : s + self.batch_size]
            scores = self._timed(lambda: model.score([uv[i] for i in r], [ut[j] for j in c]))
            if scores.shape != (len(r),):
                raise AbductError(f"the model returned shape {scores.shape} for {len(r)} pairs")
            return scores

        parts = self._each_batch(starts, run, "scoring pairs")
        return np.concatenate(parts) if parts else np.empty(0)

    def _pairs_from_matrices(
        self, model: MatrixScorer, uv: list[VisualInput], ut: list[str], rows: np.ndarray, cols: np.ndarray
    ) -> np.ndarray:
        """Pairwise scores from a matrix-only model: one row per visual, over just the texts
        paired with it (a Sherlock comparison source: one visual, ~10 candidates)."""
        out = np.empty(len(rows))
        order = np.argsort(rows, kind="stable")
        bounds = np.flatnonzero(np.diff(rows[order])) + 1
        groups = np.split(order, bounds) if len(order) else []

        def run(group: np.ndarray) -> np.ndarray:
            visual = uv[int(rows[group[0]])]
            row = np.empty(len(group))
            for s in range(0, len(group), self.batch_size):
                texts = [ut[int(j)] for j in cols[group[s : s + self.batch_size]]]
                matrix = self._timed(lambda: model.score_matrix([visual], texts))  # noqa: B023 (called at once)
                if matrix.shape != (1, len(texts)):
                    raise AbductError(f"the model returned shape {matrix.shape} for a 1 x {len(texts)} matrix")
                row[s : s + len(texts)] = matrix[0]
            return row

        for group, row in zip(groups, self._each_batch(groups, run, "scoring rows", "row")):
            out[group] = row
        return out
