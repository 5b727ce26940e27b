"""Visual tokens: the clue region first, context boxes after, features cached on disk by
image content and box."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from abduct import Box, Region, VisualInput
from abduct_regions.extractor import RoIExtractor
from abduct_regions.feature_files import write_tsv_row
from abduct_regions.featurizer import FeatureSettings, RegionFeaturizer, grid_boxes
from abduct_testing import make_images
from abduct_testing.damage import KINDS, damage, rewrite_npz

TINY = FeatureSettings(backbone="resnet18-c4", size=32, pool=2, grid=2, max_boxes=8)


def test_region_first_then_grid_and_features_match_the_extractor(tmp_path: Path) -> None:
    (path,) = make_images(tmp_path, 1, size=(64, 32))
    featurizer = RegionFeaturizer(TINY)
    visual = VisualInput(str(path), Region((Box(2, 1, 24, 16), Box(40, 10, 20, 20))))
    tokens = featurizer.one(visual)
    assert tokens.features.shape == (2 + 1 + 4, 256)
    np.testing.assert_allclose(tokens.boxes[:2], [[2 / 64, 1 / 32, 26 / 64, 17 / 32], [40 / 64, 10 / 32, 60 / 64, 30 / 32]])
    np.testing.assert_allclose(tokens.boxes[2], [0, 0, 1, 1])
    extractor = RoIExtractor("resnet18-c4", size=32, pool=2)
    with Image.open(path) as image:
        alone = extractor.features(image, np.array([[2, 1, 26, 17]]))
    np.testing.assert_allclose(tokens.features[0], alone[0], rtol=1e-4, atol=1e-5)
    assert not np.allclose(tokens.features[0], tokens.features[1])
    np.testing.assert_allclose(grid_boxes(16, 8, 2)[1:], [[0, 0, 8, 4], [8, 0, 16, 4], [0, 4, 8, 8], [8, 4, 16, 8]])


def test_cache_hits_by_content_and_misses_for_other_pixels(tmp_path: Path) -> None:
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    (path,) = make_images(first_dir, 1, size=(16, 8))
    visual = VisualInput(str(path), Region((Box(2, 1, 6, 4),)))
    cold = RegionFeaturizer(TINY, cache_dir=tmp_path / "cache")
    expected = cold.one(visual)
    assert cold.extracted == 6
    second_dir.mkdir()
    moved = second_dir / "copy.jpg"
    moved.write_bytes(path.read_bytes())
    warm = RegionFeaturizer(TINY, cache_dir=tmp_path / "cache")
    again = warm.one(VisualInput(str(moved), visual.region))
    assert warm.extracted == 0
    np.testing.assert_array_equal(again.features, expected.features)
    (other,) = make_images(tmp_path / "c", 1, size=(16, 8), seed=5)
    warm.one(VisualInput(str(other), visual.region))
    assert warm.extracted == 6


def test_features_file_gives_the_context_and_the_clue_is_extracted(tmp_path: Path) -> None:
    (path,) = make_images(tmp_path, 1, size=(16, 8))
    boxes = np.array([[0, 0, 8, 8], [4, 0, 16, 6], [1, 1, 3, 3]], dtype=np.float32)
    rows = np.random.default_rng(0).normal(size=(3, 256)).astype(np.float32)
    features = tmp_path / "feats.tsv"
    features.write_text(write_tsv_row(path.stem, 16, 8, boxes, rows))
    settings = FeatureSettings(backbone="resnet18-c4", size=16, pool=2, features=str(features), max_boxes=3)
    tokens = RegionFeaturizer(settings).one(VisualInput(str(path), Region((Box(2, 1, 6, 4),))))
    assert tokens.features.shape == (3, 256)  # the clue, then the first two boxes of the file (max_boxes)
    np.testing.assert_array_equal(tokens.features[1:], rows[:2])
    np.testing.assert_allclose(tokens.boxes[1], [0, 0, 0.5, 1.0])


@pytest.mark.parametrize("kind", [*KINDS, "nan", "other format"])
def test_a_damaged_feature_shard_is_said_once_and_extracted_again(tmp_path: Path, kind: str) -> None:
    import warnings

    from abduct.kit.cache import CacheWarning

    (path,) = make_images(tmp_path, 1, size=(16, 8))
    visual = VisualInput(str(path), Region((Box(2, 1, 6, 4),)))
    clean = RegionFeaturizer(TINY, cache_dir=tmp_path / "cache").one(visual)
    [shard] = (tmp_path / "cache").rglob("shard-*.npz")
    if kind == "nan":
        with np.load(shard) as stored:
            vectors = stored["vectors"].copy()
        vectors[-1, 0] = np.nan
        rewrite_npz(shard, vectors=vectors)
    elif kind == "other format":
        rewrite_npz(shard, vectors=np.zeros((3, 3, 3), np.float32))
    else:
        damage(shard, kind)
    again = RegionFeaturizer(TINY, cache_dir=tmp_path / "cache")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tokens = again.one(visual)
    said = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(said) == 1 and str(shard) in said[0], said
    assert again.extracted == 6
    np.testing.assert_array_equal(tokens.features, clean.features)
