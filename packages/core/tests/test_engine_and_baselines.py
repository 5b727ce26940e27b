"""The scoring engine: dedup, fast paths agreeing with pairwise scoring, the disk cache."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from abduct._builtins.baselines import ConstantScorer, RandomModel
from abduct._engine.scoring import ScoringEngine
from abduct.contract.records import Box, Region, VisualInput
from abduct.kit.cache import EmbeddingCache
from abduct.kit.content import unique_index
from abduct_testing import ScorerContract, make_images


class CountingEncoder:
    """A deterministic dual encoder over pixel statistics that counts what it encodes."""

    fingerprint = "counting-v1"
    accepts = frozenset({"image", "region"})

    def __init__(self) -> None:
        self.visual_calls: list[str] = []
        self.text_calls: list[str] = []

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        from PIL import Image

        self.visual_calls += [v.key() for v in visuals]
        rows = []
        for v in visuals:
            pixels = np.asarray(Image.open(v.media).convert("RGB"), dtype=np.float64).mean(axis=(0, 1))
            box = v.region.boxes[0] if v.region else Box(0, 0, 0, 0)
            rows.append(np.concatenate([pixels, [box.left + 1, box.width + 1]]))
        out = np.array(rows)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        self.text_calls += list(texts)
        out = np.array([[len(t), t.count("a") + 1, t.count("e") + 1, 1.0, 2.0] for t in texts], dtype=np.float64)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.einsum("ij,ij->i", self.encode_visual(visuals), self.encode_text(texts))


class TestRandomContract(ScorerContract):
    def make_scorer(self) -> object:
        return RandomModel(5)


class TestConstantContract(ScorerContract):
    def make_scorer(self) -> object:
        return ConstantScorer(0.5)


class TestCountingContract(ScorerContract):
    def make_scorer(self) -> object:
        return CountingEncoder()


@pytest.fixture
def visuals(tmp_path: Path) -> list[VisualInput]:
    paths = make_images(tmp_path / "img", 3)
    region = Region((Box(2, 2, 10, 10),))
    return [VisualInput(str(paths[0])), VisualInput(str(paths[1]), region), VisualInput(str(paths[2]))]


def test_unique_index() -> None:
    unique, inverse = unique_index(["b", "a", "b", "c", "a"])
    assert unique == ["b", "a", "c"]
    assert inverse.tolist() == [0, 1, 0, 2, 1]


def test_each_unique_input_encoded_once(visuals: list[VisualInput]) -> None:
    model = CountingEncoder()
    engine = ScoringEngine(model, batch_size=2, quiet=True)
    many_visuals = visuals * 4
    texts = ["it rained", "a party", "it rained", "someone left"] * 3
    matrix = engine.score_matrix(many_visuals, texts)
    assert matrix.shape == (12, 12)
    assert len(model.visual_calls) == 3 and len(model.text_calls) == 3
    direct = model.encode_visual(many_visuals) @ model.encode_text(texts).T
    np.testing.assert_allclose(matrix, direct, rtol=1e-6)


def test_random_is_order_and_batch_independent(visuals: list[VisualInput]) -> None:
    texts = ["x", "y", "z", "w"]
    a = ScoringEngine(RandomModel(1), batch_size=1, quiet=True).score_pairs(visuals, texts[:3])
    b = ScoringEngine(RandomModel(1), batch_size=64, quiet=True).score_pairs(visuals[::-1], texts[:3][::-1])[::-1]
    np.testing.assert_array_equal(a, b)
    m = RandomModel(1).score_matrix(visuals, texts)
    assert ((m >= 0) & (m < 1)).all()
    assert len(np.unique(m)) == m.size  # no accidental ties
    assert not np.array_equal(m, RandomModel(2).score_matrix(visuals, texts))


def test_cache_is_content_addressed(tmp_path: Path, visuals: list[VisualInput]) -> None:
    texts = ["a", "b"]
    first_model = CountingEncoder()
    cache_root = tmp_path / "cache"
    first = ScoringEngine(first_model, cache=EmbeddingCache(cache_root, "counting-v1"), quiet=True).score_matrix(visuals, texts)
    second_model = CountingEncoder()
    second = ScoringEngine(second_model, cache=EmbeddingCache(cache_root, "counting-v1"), quiet=True).score_matrix(visuals, texts)
    np.testing.assert_allclose(first, second)
    assert second_model.visual_calls == [] and second_model.text_calls == []
    # New content at the same path is a new key; another fingerprint is another cache.
    make_images(Path(visuals[0].media).parent, 1, seed=99)
    third_model = CountingEncoder()
    ScoringEngine(third_model, cache=EmbeddingCache(cache_root, "counting-v1"), quiet=True).score_matrix(visuals, texts)
    assert third_model.visual_calls == [visuals[0].key()]
    other = CountingEncoder()
    ScoringEngine(other, cache=EmbeddingCache(cache_root, "counting-v2"), quiet=True).score_matrix(visuals, texts)
    assert len(other.visual_calls) == 3


def test_bad_model_output_is_reported(visuals: list[VisualInput]) -> None:
    class Wrong:
        accepts = frozenset({"image", "region"})

        def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
            return np.zeros(len(texts) + 1)

    from abduct.contract.errors import AbductError

    with pytest.raises(AbductError, match="shape"):
        ScoringEngine(Wrong(), quiet=True).score_pairs(visuals, ["a", "b", "c"])


def test_random_does_not_depend_on_where_the_data_lies(tmp_path: Path) -> None:
    here = [VisualInput(str(tmp_path / "a" / "VG_100K" / "1.jpg"), Region((Box(1, 2, 3, 4),)))]
    there = [VisualInput(str(tmp_path / "b" / "c" / "VG_100K" / "1.jpg"), Region((Box(1, 2, 3, 4),)))]
    other = [VisualInput(str(tmp_path / "a" / "VG_100K_2" / "1.jpg"), Region((Box(1, 2, 3, 4),)))]
    scorer = RandomModel(0)
    np.testing.assert_array_equal(scorer.score_matrix(here, ["t"]), scorer.score_matrix(there, ["t"]))
    assert scorer.score_matrix(here, ["t"])[0, 0] != scorer.score_matrix(other, ["t"])[0, 0]
