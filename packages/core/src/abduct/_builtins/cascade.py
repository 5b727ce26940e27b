"""Cascade re-ranking, a built-in model built from two others: a dual encoder ranks everything,
a cross-encoder re-scores the top.

``cascade:DUAL+CROSS[,k=50]`` (e.g. ``cascade:clip:tiny+lxmert:tiny,k=50``; quote the
argument when a part has options of its own: ``cascade:"clip:tiny,mode=plain+lxmert:DIR"``).

A score matrix (a retrieval chunk, one image's localization boxes x inferences) costs the
dual encoder's N + M encodings, plus one cross-encoder pass for each pair in the **union** of
every row's top ``k`` and every column's top ``k`` under the dual scores (at most
``k * (N + M)`` passes instead of ``N * M``).

How the two score scales are merged, so that the official ranks stay well defined:

- a re-scored pair gets ``cross + shift`` with ``shift = max(dual) - min(cross over the
  re-scored pairs) + 1``, one constant per matrix: re-scored pairs keep the cross-encoder's
  order (and its ties) among themselves, and every one of them lies strictly above every
  pair that was not re-scored;
- every other pair keeps its dual score, so below the re-scored ones it keeps its dual rank.

So in each row (image -> text) and each column (text -> image) the re-scored candidates come
first, in cross-encoder order, then the rest in dual order: a pure function of the two
models' scores. Scores of *pairs* (``score``: Sherlock comparison, CoSIm choices) are the
cross-encoder's own, since there is nothing to rank there; because ``shift`` is per matrix,
values from different matrices are not comparable (each task ranks within one matrix).
Top-k ties under the dual scores go to the lower index (a stable sort).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from abduct._engine.models import LoadedModel, engine_for, load_model
from abduct._engine.scoring import ScoringEngine
from abduct._registry.registry import Registry
from abduct.contract import AbductError, Decoding, Settings, Spec, VisualInput
from abduct.contract.records import FEATURES
from abduct.contract.spec import split_outside_quotes


def top_k_mask(scores: np.ndarray, k: int) -> np.ndarray:
    """True at each row's ``k`` highest entries and each column's ``k`` highest (ties: lower index)."""
    n, m = scores.shape
    mask = np.zeros((n, m), dtype=bool)
    if n == 0 or m == 0 or k <= 0:
        return mask
    rows = np.argsort(-scores, axis=1, kind="stable")[:, : min(k, m)]
    np.put_along_axis(mask, rows, True, axis=1)
    cols = np.argsort(-scores, axis=0, kind="stable")[: min(k, n), :]
    np.put_along_axis(mask, cols, True, axis=0)
    return mask


def merge_scores(dual: np.ndarray, cross: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Dual scores with the masked entries replaced by ``cross`` shifted above them all."""
    merged = np.array(dual, dtype=np.float64)
    if mask.any():
        shift = float(merged.max()) - float(cross[mask].min()) + 1.0
        merged[mask] = cross[mask] + shift
    return merged


def _part_engine(part: LoadedModel, batch_size: int) -> ScoringEngine:
    """A part's own engine, uncached: the input features it does not accept are taken out."""
    engine = engine_for(part, Settings(batch_size=batch_size), optional_inputs=FEATURES, use_cache=False,
                        label=part.spec.name).scoring
    if engine is None:
        raise AbductError(f"cascade: the model '{part.spec.name}' does not score")
    return engine


class CascadeScorer:
    """``score_matrix`` as described in the module docstring; ``score`` is the cross-encoder's."""

    def __init__(self, dual: Any, cross: Any, k: int = 50, *, dual_name: str = "dual", cross_name: str = "cross",
                 batch_size: int = 64) -> None:
        if k < 1:
            raise AbductError(f"cascade: k must be at least 1, got {k}")
        self.k = k
        first, second = LoadedModel(Spec(dual_name), dual, Decoding()), LoadedModel(Spec(cross_name), cross, Decoding())
        # each part sees what it accepts of the input (the cascade takes the union)
        self.dual, self.cross = _part_engine(first, batch_size), _part_engine(second, batch_size)
        self.accepts = first.traits.accepts | second.traits.accepts
        self.needs = first.traits.needs | second.traits.needs
        self.fingerprint = f"cascade|k={k}|{first.fingerprint}|{second.fingerprint}"
        self.passes = 0  # cross-encoder pairs scored (the cost the cascade saves)
        self.full_passes = 0  # what scoring every pair of the same matrices would have cost

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        dual = self.dual.score_matrix(visuals, texts)
        mask = top_k_mask(dual, self.k)
        rows, cols = np.nonzero(mask)
        cross = np.zeros_like(dual)
        if len(rows):
            cross[rows, cols] = self.cross.score_pairs([visuals[i] for i in rows.tolist()],
                                                      [texts[j] for j in cols.tolist()])
        self.passes += len(rows)
        self.full_passes += dual.size
        return merge_scores(dual, cross, mask)

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        self.passes += len(texts)
        self.full_passes += len(texts)
        return self.cross.score_pairs(visuals, texts)


def cascade_parts(spec: Spec) -> tuple[str, str]:
    """The two model specs of ``cascade:DUAL+CROSS`` (a ``+`` inside quotes does not split)."""
    if not spec.argument:
        raise AbductError("cascade needs two models: cascade:DUAL+CROSS[,k=50], e.g. cascade:clip:tiny+lxmert:tiny")
    # the spec grammar reads a part's @tag as the cascade's: put it back
    argument = spec.argument if spec.tag is None else f"{spec.argument}@{spec.tag}"
    try:
        parts = split_outside_quotes(argument, "+")
    except AbductError as exc:  # an unclosed quote
        raise AbductError(f"cascade: {exc}") from None
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise AbductError(f"cascade: expected DUAL+CROSS (e.g. cascade:clip:tiny+lxmert:tiny,k=50), got '{argument}'")
    return parts[0].strip(), parts[1].strip()


def make_cascade(spec: Spec, settings: Settings, registry: Registry, *, k: int = 50) -> CascadeScorer:
    """``cascade:DUAL+CROSS[,k=N]``: see the module docstring. Its two models come from the
    registry that builds it."""
    built = []
    for role, text in zip(("dual", "cross"), cascade_parts(spec)):
        loaded = load_model(text, settings, registry)
        if not loaded.scores:
            raise AbductError(f"cascade: the {role} model '{text}' does not score")
        built.append(loaded)
    return CascadeScorer(built[0].model, built[1].model, k, dual_name=str(built[0].spec.name),
                         cross_name=str(built[1].spec.name), batch_size=settings.batch_size)
