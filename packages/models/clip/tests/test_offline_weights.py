"""Pretrained tags on a machine without network: a tag whose weights are not cached fails in
seconds with one line and exit 2 (the hub endpoint is pointed at a closed local port, so the
test does not depend on this machine's network); cached weights load with no network call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import open_clip  # type: ignore[import-untyped]
import pytest
from clip_helpers import clip_model, make_examples
from safetensors.torch import save_file

from abduct import AbductError
from abduct.host import Registry
from abduct_clip._scorer import ClipScorer
from abduct_clip.settings import TINY_ARCH, ClipSettings
from abduct_testing import fast_one_line_failure, hub_snapshot, unreachable_hub

REPO = "abduct-test/tiny-clip"
TAG = "abducttest"


@pytest.fixture
def no_hub(tmp_path: Path) -> Iterator[Path]:
    """An unreachable hub endpoint and an empty hub cache; yields the cache."""
    with unreachable_hub(tmp_path / "hf-cache") as cache:
        yield cache


def test_an_unreachable_pretrained_tag_fails_in_seconds_with_one_line(
        no_hub: Path, tmp_path: Path, test_registry: Registry) -> None:
    err = fast_one_line_failure(["eval", "toy-match", "--model", "clip:ViT-B-16@openai", "--data", str(tmp_path),
                                 "--out", str(tmp_path / "out"), "--quiet"])
    assert err.startswith("error: clip:ViT-B-16@openai: weights not found"), err
    for part in ("unreachable", "timm/vit_base_patch16_clip_224.openai", str(no_hub), "clip:ViT-B-16:/path/to",
                 "HF_HUB_OFFLINE=1"):
        assert part in err


def test_offline_mode_fails_without_probing(no_hub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(AbductError, match=r"\(HF_HUB_OFFLINE set\)"):
        clip_model("clip:ViT-B-16@openai")


def test_an_unknown_tag_lists_the_known_ones(no_hub: Path) -> None:
    with pytest.raises(AbductError, match="has no pretrained tag 'nope' .*openai"):
        clip_model("clip:ViT-B-16@nope")


@pytest.mark.parametrize("offline_variable", [True, False])
def test_cached_weights_load_with_no_network(no_hub: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             offline_variable: bool) -> None:
    """A tag whose weights sit in the hub cache loads offline (as after one download with network)."""
    reference = ClipScorer(ClipSettings(arch="tiny", workers=0), seed=7)
    save_file({k: v.contiguous() for k, v in reference.model.state_dict().items()},
              str(hub_snapshot(no_hub, REPO) / "open_clip_model.safetensors"))
    monkeypatch.setitem(open_clip.pretrained._PRETRAINED, TINY_ARCH, {TAG: {"hf_hub": f"{REPO}/", "quick_gelu": True}})
    if offline_variable:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    scorer = clip_model(f"clip:tiny@{TAG},workers=0", seed=0)
    images = make_examples(tmp_path / "img", 2)
    np.testing.assert_allclose(scorer.encode_visual(images), reference.encode_visual(images), atol=1e-5)
