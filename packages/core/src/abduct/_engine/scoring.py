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
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np

from abduct._engine.inputs import InputPolicy
from abduct._engine.tokens import Prices, Tokens, model_usage
from abduct._registry.contain import plugin_call
from abduct.contract.errors import AbductError, PluginError
from abduct.contract.protocols import SCORING_PROTOCOLS, DualEncoder, MatrixScorer, Scorer
from abduct.contract.records import VisualInput
from abduct.kit.cache import EmbeddingCache, ShardCache
from abduct.kit.content import ContentKeys, unique_index
from abduct.kit.distributed import Ranks, gather_objects, shard_map
from abduct.kit.progress_bars import progress

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
B = TypeVar("B")
R = TypeVar("R")


@dataclass
class Timer:
    """Seconds spent inside the model, shared by a run's engines."""

    seconds: float = 0.0


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
        plugin: str | None = None,
    ) -> None:
        self.model = model
        self.plugin = plugin  # the plugin that provides the model, named with the model in its faults
        self.ranks = ranks or Ranks()
        self.batch_size = max(1, int(batch_size))
        self.quiet = quiet
        self.policy = policy or InputPolicy(model, type(model).__name__)
        self.keys = keys or ContentKeys()
        self.timer = timer or Timer()
        self.calls = 0
        self.tokens = Tokens()  # this engine's part of the token ledger (abduct._engine.tokens)
        self.planned = 0  # items its calls were given to compute, cache hits apart (progress's estimate)
        self.prices: Prices | None = None  # what its tokens cost (the spec's price_in=, price_out=)
        self._call_usage: Tokens | None = None  # the model's usage when the call in flight began
        self.before_batch: Callable[[], None] | None = None  # the run's budget check, before each batch is sent

    @property
    def who(self) -> str:
        """The model as its faults name it: ``model 'name' (plugin 'p')``."""
        return f"model '{self.policy.model_name}'" + (f" (plugin '{self.plugin}')" if self.plugin else "")

    def fault(self, what: str) -> PluginError:
        """The model returned something it must not: one line naming it and what was wrong."""
        return PluginError(f"{self.who} {what}")

    def _timed(self, fn: Callable[[], Any], method: str = "score", numeric: bool = True) -> np.ndarray:
        """One call of the model (its ``method``), timed, with what it prints on stderr; what it
        raises is one line naming it. A score or an embedding that is not a number, or is NaN or
        infinite, is refused here, where every task's numbers come from, rather than ranked as if
        it were one."""
        self.calls += 1
        before = self._call_usage = model_usage(self.model)
        start = time.perf_counter()
        counted = False  # whether the model counted this call itself (its usage moved)
        try:
            returned = plugin_call(self.who, method, fn)
        finally:
            self.timer.seconds += time.perf_counter() - start
            after = model_usage(self.model)
            self._call_usage = None
            if before is not None and after is not None and not (cost := after.minus(before)).empty:
                self.tokens.add(cost)  # what the call cost, as the model counts it
                counted = True
        if not numeric:
            made = np.asarray(returned, dtype=object)
            if not counted:  # a model that keeps no usage (or not for this method): each text is a request
                self.tokens.requests += int(made.size)
            return made
        try:
            out = np.asarray(returned)
        except ValueError as exc:  # ragged rows
            raise self.fault(f"returned from {method} something that is not an array of numbers: {exc}") from None
        if out.dtype.kind not in "biuf":
            raise self.fault(f"returned {out.dtype} values from {method}; expected numbers")
        if out.dtype.kind == "f" and not np.isfinite(out).all():
            bad = int(np.size(out) - np.isfinite(out).sum())
            raise self.fault(f"returned {bad} non-finite value(s) (NaN or infinity) among its scores or "
                             "embeddings; they must be finite numbers")
        if not counted:  # a model that keeps no usage (or not for this method): each input or pair is a request
            self.tokens.requests += int(out.shape[0] if method.startswith("encode") and out.ndim else out.size)
        return out

    def live(self) -> Tokens:
        """``tokens`` with what the call in flight has cost so far, for a model that counts each
        answer as it comes (a served model); read by the run's progress from another thread."""
        out = Tokens(**self.tokens.as_dict())
        before, now = self._call_usage, model_usage(self.model)
        if before is not None and now is not None:
            out.add(now.minus(before))
        return out

    def _each_batch(self, batches: Sequence[B], compute: Callable[[B], R], desc: str, unit: str = "batch") -> list[R]:
        """``compute`` of every batch, in order, with a progress bar. Under torchrun the ranks
        split the batches (``abduct.kit.distributed.shard_map``) and all receive every result."""
        quiet = self.quiet or not self.ranks.is_main

        def bar(mine: Sequence[B]) -> Iterable[B]:
            return progress(mine, desc=desc, quiet=quiet or len(mine) < 2, unit=unit)

        return shard_map(batches, compute, self.ranks, bar)

    def _through_cache(self, items: Sequence[K], cache: ShardCache[V] | None, content_key: Callable[[K], str],
                       compute: Callable[[list[K]], Sequence[V] | np.ndarray], desc: str,
                       group_by: Callable[[K], str] | None = None) -> list[V]:
        """``compute`` of each item, in order: read from ``cache`` by the item's content key, else
        computed in batches (``_each_batch``) and stored. Under torchrun every rank computes (its
        share of) the items some rank lacks, whatever its own cache holds, and takes the computed
        values over its cached ones, so that all ranks hold the same numbers. With ``group_by``,
        items are computed grouped by its key (groups in order of first appearance), so items
        sharing an image reach a served model's replicas together; results keep their order."""
        keys = [content_key(item) for item in items] if cache is not None else []
        found: list[V | None] = cache.get(keys) if cache is not None else [None] * len(items)
        todo = [i for i, value in enumerate(found) if value is None]
        self.tokens.cached += len(items) - len(todo)
        self.planned += len(todo)
        if self.ranks.world > 1:
            todo = sorted(set().union(*gather_objects(todo, self.ranks)))
        if group_by is not None:
            first: dict[str, int] = {}
            todo.sort(key=lambda i: first.setdefault(group_by(items[i]), len(first)))
        batches = [todo[i : i + self.batch_size] for i in range(0, len(todo), self.batch_size)]

        def run(batch: list[int]) -> Sequence[V] | np.ndarray:
            if self.before_batch is not None:
                self.before_batch()
            values = compute([items[i] for i in batch])
            if cache is not None:
                cache.put([keys[i] for i in batch], values)
            return values

        for batch, values in zip(batches, self._each_batch(batches, run, desc)):
            for i, value in zip(batch, values):
                found[i] = value
        return cast("list[V]", found)  # every item missing from the cache was computed


class ScoringEngine(ModelCalls):
    """Scores (visual, text) pairs and matrices with ``model``, counting its own time."""

    def __init__(self, model: object, *, batch_size: int = 64, cache: EmbeddingCache | None = None,
                 **shared: Any) -> None:
        if not isinstance(model, SCORING_PROTOCOLS):
            raise AbductError(f"{type(model).__name__} does not score (no score/score_matrix/encode methods)")
        super().__init__(model, batch_size=batch_size, **shared)
        self.cache = cache

    @property
    def is_dual_encoder(self) -> bool:
        return isinstance(self.model, DualEncoder)

    # -- encoding ------------------------------------------------------------------------
    def _encode(self, items: Sequence[K], content_key: Callable[[K], str], encode: Callable[[list[K]], np.ndarray],
                desc: str, method: str) -> np.ndarray:
        unique, inverse = unique_index(items)

        def run(batch: list[K]) -> np.ndarray:
            vectors = self._timed(lambda: encode(batch), method)
            if vectors.ndim != 2 or vectors.shape[0] != len(batch):
                raise self.fault(f"returned shape {vectors.shape} from {method} for {len(batch)} inputs "
                                 f"(expected {len(batch)} x dimension)")
            return vectors

        rows = self._through_cache(unique, self.cache, content_key, run, desc)
        return np.stack(rows)[inverse] if rows else np.zeros((0, 0), dtype=np.float32)

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        """Embeddings of ``visuals`` (dual encoders only); duplicates are encoded once."""
        assert isinstance(self.model, DualEncoder)
        return self._encode(self.policy.prepare_all(visuals), self.keys.visual, self.model.encode_visual,
                            "encoding images", "encode_visual")

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` (dual encoders only); duplicates are encoded once."""
        assert isinstance(self.model, DualEncoder)
        return self._encode(list(texts), self.keys.text, self.model.encode_text, "encoding texts",
                            "encode_text")

    # -- scoring -------------------------------------------------------------------------
    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        """The ``len(visuals) x len(texts)`` matrix of scores."""
        uv, v_inv = unique_index(self.policy.prepare_all(visuals))
        ut, t_inv = unique_index(list(texts))
        if not uv or not ut:
            return np.zeros((len(visuals), len(texts)))
        model = self.model
        if isinstance(model, DualEncoder):
            v, t = self._both_encoded(uv, ut)
            matrix = v.astype(np.float32, copy=False) @ t.astype(np.float32, copy=False).T
        elif isinstance(model, MatrixScorer):  # one call, or under torchrun one part of the visuals per rank
            step = -(-len(uv) // self.ranks.world)
            parts = [uv[i : i + step] for i in range(0, len(uv), step)]
            matrix = np.concatenate(self._each_batch(
                parts, lambda part: self._checked_matrix(model, part, ut), "scoring", "part"))
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
        if not len(visuals):
            return np.zeros(0)
        if isinstance(self.model, DualEncoder):
            v, t = (m.astype(np.float64) for m in self._both_encoded(visuals, texts))
            dots: np.ndarray = np.einsum("ij,ij->i", v, t)
            return dots
        uv, v_inv = unique_index(self.policy.prepare_all(visuals))
        ut, t_inv = unique_index(list(texts))
        pairs, pair_inv = unique_index(list(zip(v_inv.tolist(), t_inv.tolist())))
        rows, cols = np.array(pairs, dtype=np.int64).T
        scores: np.ndarray = self._score_unique_pairs(uv, ut, rows, cols)[pair_inv]
        return scores

    def _both_encoded(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Both sides' embeddings, of one dimension (else one line naming the model)."""
        v, t = self.encode_visual(visuals), self.encode_text(texts)
        if v.shape[1] != t.shape[1]:
            raise self.fault(f"encodes images in {v.shape[1]} dimensions and texts in {t.shape[1]}; "
                             "a dual encoder's two sides must match")
        return v, t

    def _checked_matrix(self, model: MatrixScorer, visuals: list[VisualInput], texts: list[str]) -> np.ndarray:
        """``model.score_matrix``, refused unless it is ``len(visuals) x len(texts)`` (a column
        too many would silently shift every text's score)."""
        matrix = self._timed(lambda: model.score_matrix(visuals, texts), "score_matrix")
        if matrix.shape != (len(visuals), len(texts)):
            raise self.fault(f"returned shape {matrix.shape} from score_matrix for {len(visuals)} visuals "
                             f"and {len(texts)} texts (expected ({len(visuals)}, {len(texts)}))")
        return matrix

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
                raise self.fault(f"returned shape {scores.shape} from score for {len(r)} pairs (expected ({len(r)},))")
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
                matrix = self._checked_matrix(model, [visual], texts)
                row[s : s + len(texts)] = matrix[0]
            return row

        for group, row in zip(groups, self._each_batch(groups, run, "scoring rows", "row")):
            out[group] = row
        return out
