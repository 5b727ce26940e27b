"""The clip scorer: contract, widescreen averaging, workers, prefixes, fingerprints and
that the dual-encoder fast path ranks exactly as pairwise scoring does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import torch
from clip_helpers import clip_model, make_examples
from scipy.stats import rankdata

from abduct import DataError, VisualInput
from abduct.host import ScoringEngine, model_traits
from abduct_clip._scorer import ClipScorer
from abduct_clip.settings import ClipSettings
from abduct_testing import ScorerContract


def tiny(**options: object) -> ClipScorer:
    return ClipScorer(ClipSettings(arch="tiny", **options), batch_size=4)  # type: ignore[arg-type]


class TestClipContract(ScorerContract):
    def make_scorer(self) -> object:
        return clip_model("clip:tiny,workers=0", batch_size=2)


class TestClipContractWithWorkers(ScorerContract):
    def make_scorer(self) -> object:
        return clip_model("clip:tiny,workers=2", batch_size=8)


def test_accepts_images_with_regions() -> None:
    assert model_traits(tiny()).accepts == {"image", "region"}
    assert isinstance(clip_model("clip:tiny,mode=plain,workers=0"), ClipScorer)


def test_device_auto_and_bad_devices() -> None:
    from abduct import AbductError
    from abduct_clip._encode import resolve_device

    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert clip_model("clip:tiny", device="auto").device.type == resolve_device("auto")
    with pytest.raises(AbductError, match="unknown device 'gpu0'"):
        resolve_device("gpu0")
    if not torch.cuda.is_available():
        with pytest.raises(AbductError, match="no CUDA GPU"):
            resolve_device("cuda")


def test_widescreen_views_are_averaged_before_normalising(tmp_path: Path) -> None:
    scorer = tiny(workers=0)
    visual = make_examples(tmp_path, 1)[0]  # a 96x64 landscape image
    views = scorer.loaded.preprocess.evaluation_views(visual)
    assert views.shape[0] == 2
    with torch.no_grad():
        features = scorer.model.encode_image(views)
    expected = torch.nn.functional.normalize(features.mean(0), dim=0).numpy()
    np.testing.assert_allclose(scorer.encode_visual([visual])[0], expected, atol=1e-5)
    # and it differs from a single centre crop
    center = tiny(workers=0, images="center").encode_visual([visual])[0]
    assert not np.allclose(center, expected, atol=1e-3)


def test_workers_do_not_change_embeddings(tmp_path: Path) -> None:
    visuals = make_examples(tmp_path, 36)
    np.testing.assert_allclose(tiny(workers=0).encode_visual(visuals), tiny(workers=2).encode_visual(visuals), atol=1e-5)


def test_prefix_and_prompt_change_the_text(tmp_path: Path) -> None:
    plain = tiny()
    prefixed = tiny(prefix="inference")
    np.testing.assert_allclose(prefixed.encode_text(["it rained"]), plain.encode_text(["inference: it rained"]), atol=1e-6)
    prompted = tiny(prompt="a photo where {}")
    np.testing.assert_allclose(prompted.encode_text(["it rained"]), plain.encode_text(["a photo where it rained"]), atol=1e-6)


def test_input_modes_change_what_the_model_sees(tmp_path: Path) -> None:
    visuals = make_examples(tmp_path, 2)
    embeddings = {mode: tiny(workers=0, mode=mode).encode_visual(visuals)
                  for mode in ("highlight", "plain", "position", "region", "context")}
    modes = list(embeddings)
    for i, a in enumerate(modes):
        for b in modes[i + 1 :]:
            assert not np.allclose(embeddings[a], embeddings[b], atol=1e-4), (a, b)


def test_fingerprint_covers_weights_and_preprocessing() -> None:
    base = tiny().fingerprint
    assert "random-init seed 0" in base and "abduct-tiny" in base
    others = [
        ClipScorer(ClipSettings(arch="tiny"), seed=1).fingerprint,
        tiny(mode="plain").fingerprint,
        tiny(images="pad").fingerprint,
        tiny(prefix="inference").fingerprint,
        tiny(prompt="x {}").fingerprint,
    ]
    assert len({base, *others}) == 6
    assert tiny(workers=0).fingerprint == base  # workers do not change results


def test_missing_image_is_a_data_error_naming_the_file(tmp_path: Path) -> None:
    visuals = [*make_examples(tmp_path, 35), VisualInput(str(tmp_path / "nope.jpg"))]
    with pytest.raises(DataError, match="nope.jpg"):
        tiny(workers=2).encode_visual(visuals)


class PairwiseOnly:
    """The same model behind the slow, per-pair interface."""

    accepts = frozenset({"image", "region"})

    def __init__(self, scorer: ClipScorer) -> None:
        self.inner = scorer

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return self.inner.score(visuals, texts)


def test_fast_path_ranks_equal_pairwise_ranks(tmp_path: Path) -> None:
    visuals = make_examples(tmp_path, 12)
    texts = [f"someone left object {i} here" for i in range(12)]
    scorer = tiny(workers=0)
    fast_engine = ScoringEngine(scorer, batch_size=5, quiet=True)
    assert fast_engine.is_dual_encoder
    fast = fast_engine.score_matrix(visuals, texts)
    slow = ScoringEngine(PairwiseOnly(scorer), batch_size=7, quiet=True).score_matrix(visuals, texts)
    np.testing.assert_allclose(fast, slow, atol=1e-5)
    for axis in (0, 1):
        assert (rankdata(-fast, axis=axis) == rankdata(-slow, axis=axis)).all()
