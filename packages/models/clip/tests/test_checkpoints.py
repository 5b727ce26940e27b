"""Loading weights: open_clip and OpenAI state dicts, the released Sherlock wrapper with its
prefixes, safetensors, our own checkpoints; always weights-only, bad files are user errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from clip_helpers import clip_model, make_examples
from safetensors.torch import save_file

from abduct import DataError
from abduct_clip._loading import checkpoint_meta
from abduct_clip._scorer import ClipScorer
from abduct_clip.settings import ClipSettings

TEXTS = ["a dog waits for its owner", "it rained"]


@pytest.fixture(scope="module")
def reference() -> ClipScorer:
    """A tiny model with seed-7 weights: the weights every file below holds."""
    return ClipScorer(ClipSettings(arch="tiny", workers=0), seed=7)


def _embeddings(spec: str, tmp_path: Path) -> tuple[np.ndarray, np.ndarray]:
    scorer = clip_model(spec + ",workers=0", seed=0)
    return scorer.encode_visual(make_examples(tmp_path / "img", 3)), scorer.encode_text(TEXTS)


def _assert_same_model(spec: str, reference: ClipScorer, tmp_path: Path) -> None:
    visual, text = _embeddings(spec, tmp_path)
    np.testing.assert_allclose(visual, reference.encode_visual(make_examples(tmp_path / "img", 3)), atol=1e-5)
    np.testing.assert_allclose(text, reference.encode_text(TEXTS), atol=1e-5)


def test_open_clip_state_dict_with_architecture(reference: ClipScorer, tmp_path: Path) -> None:
    path = tmp_path / "plain.pt"
    torch.save(reference.model.state_dict(), path)
    _assert_same_model(f"clip:tiny:{path}", reference, tmp_path)
    # the seed of the run does not matter once weights are loaded; the file hash is the identity
    assert "sha256:" in clip_model(f"clip:tiny:{path}", seed=3).fingerprint


@pytest.mark.parametrize("prefix", ["module.clip_model.", "clip_model."])
def test_released_sherlock_format_without_architecture(reference: ClipScorer, tmp_path: Path, prefix: str) -> None:
    """OpenAI-format state dicts describe their architecture (our tiny config uses QuickGELU
    and 64-wide heads as OpenAI's do), so no ARCH is needed."""
    path = tmp_path / "sherlock.pt"
    state = {prefix + k: v for k, v in reference.model.state_dict().items()}
    torch.save({"model_state_dict": state}, path)
    _assert_same_model(f"clip:{path}", reference, tmp_path)


def test_safetensors(reference: ClipScorer, tmp_path: Path) -> None:
    path = tmp_path / "weights.safetensors"
    save_file({k: v.contiguous() for k, v in reference.model.state_dict().items()}, str(path))
    _assert_same_model(f"clip:tiny:{path}", reference, tmp_path)


def test_own_checkpoint_restores_its_settings(reference: ClipScorer, tmp_path: Path) -> None:
    path = tmp_path / "best.pt"
    settings = ClipSettings(arch="tiny", mode="plain", prefix="inference")
    torch.save({"model_state_dict": reference.model.state_dict(), "abduct": checkpoint_meta("abduct-tiny", settings)}, path)
    scorer = clip_model(f"clip:{path}")
    assert (scorer.settings.mode, scorer.settings.prefix) == ("plain", "inference")
    # an explicit option wins over the checkpoint's own
    assert clip_model(f"clip:{path},mode=highlight").settings.mode == "highlight"


class NotATensor:
    pass


def test_pickled_objects_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "evil.pt"
    torch.save({"model_state_dict": {"x": NotATensor()}}, path)
    with pytest.raises(DataError, match="evil.pt.*weights-only"):
        clip_model(f"clip:tiny:{path}")


def test_bad_checkpoints_are_data_errors(reference: ClipScorer, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        clip_model(f"clip:tiny:{tmp_path / 'missing.pt'}")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint")
    with pytest.raises(DataError, match="garbage.pt"):
        clip_model(f"clip:tiny:{garbage}")
    wrong = tmp_path / "wrong.pt"
    torch.save({"visual.something": torch.zeros(2)}, wrong)
    with pytest.raises(DataError, match="do not fit"):
        clip_model(f"clip:tiny:{wrong}")
    with pytest.raises(DataError, match="architecture"):
        clip_model(f"clip:{wrong}")


def test_unknown_architecture_is_a_user_error() -> None:
    from abduct import AbductError

    with pytest.raises(AbductError, match="unknown architecture"):
        clip_model("clip:ViT-Nope-1")
