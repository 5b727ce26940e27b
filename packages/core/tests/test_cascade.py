"""Cascade re-ranking: which pairs the cross-encoder sees, and how the two scales merge."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from abduct import AbductError, Settings, Spec, VisualInput
from abduct._builtins.cascade import CascadeScorer, cascade_parts, make_cascade, merge_scores, top_k_mask
from abduct._engine.models import load_model
from abduct._engine.scoring import ScoringEngine
from abduct._registry.registry import Registry, build_registry
from toy_plugin import Echo


class TableDual:
    """A dual encoder whose embeddings are one-hot rows, so scores = table entries."""

    accepts = frozenset({"image"})

    def __init__(self, table: np.ndarray) -> None:
        self.table = table

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        return np.stack([self.table[int(Path(v.media or "").stem)] for v in visuals]).astype(np.float32)

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        return np.eye(self.table.shape[1], dtype=np.float32)[[int(t) for t in texts]]


class TableCross:
    """A pairwise scorer reading a table; counts its pairs."""

    accepts = frozenset({"image", "context"})

    def __init__(self, table: np.ndarray) -> None:
        self.table, self.seen = table, []

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        pairs = [(int(Path(v.media or "").stem), int(t)) for v, t in zip(visuals, texts)]
        self.seen.extend(pairs)
        return np.array([self.table[i, j] for i, j in pairs], dtype=np.float64)


def visuals(n: int) -> list[VisualInput]:
    return [VisualInput(f"{i}.jpg", context="a clue") for i in range(n)]


def test_top_k_mask_is_rows_and_columns_union_with_stable_ties() -> None:
    scores = np.array([[0.9, 0.5, 0.5], [0.1, 0.2, 0.3], [0.0, 0.0, 0.0]])
    mask = top_k_mask(scores, 1)
    # rows: (0,0), (1,2), (2,0) [tie -> lowest index]; columns: (0,0), (0,1) [tie], (0,2)
    expected = {(0, 0), (1, 2), (2, 0), (0, 1), (0, 2)}
    assert set(zip(*np.nonzero(mask))) == expected


def test_merge_puts_rescored_pairs_first_in_cross_order_and_keeps_dual_order_below() -> None:
    dual = np.array([[0.9, 0.8, 0.1, 0.0]])
    cross = np.array([[-3.0, 5.0, 0.0, 0.0]])
    mask = np.array([[True, True, False, False]])
    merged = merge_scores(dual, cross, mask)
    # shift = max(dual) - min(cross[mask]) + 1 = 0.9 + 3 + 1
    np.testing.assert_allclose(merged, [[-3.0 + 4.9, 5.0 + 4.9, 0.1, 0.0]])
    assert list(np.argsort(-merged[0])) == [1, 0, 2, 3]


def test_cascade_scores_at_most_k_per_row_and_column_and_equals_cross_when_k_covers_all() -> None:
    rng = np.random.default_rng(0)
    dual_table, cross_table = rng.normal(size=(6, 5)), rng.normal(size=(6, 5))
    texts = [str(j) for j in range(5)]
    cross = TableCross(cross_table)
    cascade = CascadeScorer(TableDual(dual_table), cross, k=2)
    merged = ScoringEngine(cascade, quiet=True).score_matrix(visuals(6), texts)
    mask = top_k_mask(dual_table, 2)
    assert set(cross.seen) == set(zip(*np.nonzero(mask))) and len(cross.seen) == mask.sum() <= 2 * (6 + 5)
    assert cascade.passes == mask.sum() and cascade.full_passes == 30
    for i in range(6):  # each row: re-scored first (cross order), the rest after (dual order)
        order = list(np.argsort(-merged[i], kind="stable"))
        top = [j for j in order if mask[i, j]]
        assert order[: len(top)] == sorted(top, key=lambda j: -cross_table[i, j])
        assert order[len(top):] == sorted(set(range(5)) - set(top), key=lambda j: -dual_table[i, j])
    everything = CascadeScorer(TableDual(dual_table), TableCross(cross_table), k=10)
    full = everything.score_matrix(visuals(6), texts)
    np.testing.assert_array_equal(np.argsort(-full, axis=1), np.argsort(-cross_table, axis=1))
    # pairs are the cross-encoder's own scores
    np.testing.assert_allclose(everything.score(visuals(2), ["3", "4"]), cross_table[[0, 1], [3, 4]])


def test_cascade_takes_the_union_of_inputs_and_each_part_sees_what_it_accepts() -> None:
    table = np.ones((2, 2))
    cascade = CascadeScorer(TableDual(table), TableCross(table), k=1)
    assert cascade.accepts == {"image", "context"}
    assert np.isfinite(cascade.score_matrix(visuals(2), ["0", "1"])).all()  # the dual part dropped the context


def test_spec_parts_with_tags_and_quotes() -> None:
    assert cascade_parts(Spec.parse("cascade:clip:ViT-B-16@openai+lxmert:tiny,k=5")) == ("clip:ViT-B-16@openai", "lxmert:tiny")
    assert cascade_parts(Spec.parse('cascade:"clip:tiny,mode=plain+random",k=5')) == ("clip:tiny,mode=plain", "random")
    with pytest.raises(AbductError, match="DUAL\\+CROSS"):
        cascade_parts(Spec.parse("cascade:random"))
    with pytest.raises(AbductError, match="cascade: unclosed '"):
        cascade_parts(Spec.parse("""cascade:"clip:x,p='a+lxmert:tiny",k=2"""))


def test_registered_cascade_builds_both_parts_and_refuses_bad_k() -> None:
    loaded = load_model("cascade:random:1+random:2,k=3", Settings(), build_registry())
    assert isinstance(loaded.model, CascadeScorer) and loaded.model.k == 3
    assert "random-seed1" in loaded.model.fingerprint and "random-seed2" in loaded.model.fingerprint
    with pytest.raises(AbductError, match="at least 1"):
        make_cascade(Spec.parse("cascade:random+random,k=0"), Settings(), build_registry(), k=0)


def test_a_part_that_does_not_score_is_refused(toy_registry: Registry) -> None:
    with pytest.raises(AbductError, match="cascade: the model 'echo' does not score"):
        CascadeScorer(TableDual(np.ones((1, 1))), Echo(), cross_name="echo")
    with pytest.raises(AbductError, match="cascade: the cross model 'echo' does not score"):
        toy_registry.create("model", "cascade:random+echo")
