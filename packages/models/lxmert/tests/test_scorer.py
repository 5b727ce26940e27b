"""lxmert:tiny through the scorer contract; checkpoints round-trip; clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from abduct import AbductError, Box, Region, Settings, VisualInput
from abduct.host import get_registry, load_model
from abduct_lxmert._model import FAMILY, HEAD_FILE
from abduct_regions.family import save_checkpoint
from abduct_regions.scoring import CrossEncoderScorer
from abduct_regions.testing import eval_with_changed_file
from abduct_testing import ScorerContract, make_images


def tiny(spec: str = "lxmert:tiny,cache=false") -> CrossEncoderScorer:
    model = load_model(spec, Settings(batch_size=4), get_registry()).model
    assert isinstance(model, CrossEncoderScorer)
    return model


class TestLxmertScorer(ScorerContract):
    def make_scorer(self) -> object:
        return tiny()


def visuals(tmp_path: Path) -> list[VisualInput]:
    paths = make_images(tmp_path / "img", 2, size=(32, 24))
    return [VisualInput(str(p), Region((Box(2, 2, 12, 10),)), context="a red ball") for p in paths]


def test_scores_depend_on_region_context_and_text(tmp_path: Path) -> None:
    scorer = tiny()
    v = visuals(tmp_path)
    base = scorer.score([v[0]], ["the ball is left"])
    moved = VisualInput(v[0].media, Region((Box(16, 10, 12, 10),)), context="a red ball")
    for other_v, other_t in ((moved, "the ball is left"), (VisualInput(v[0].media, v[0].region, "a dog"), "the ball is left"),
                             (v[0], "someone cooked")):
        assert not np.isclose(scorer.score([other_v], [other_t])[0], base[0], rtol=0, atol=1e-7)


def test_checkpoint_directory_round_trips(tmp_path: Path) -> None:
    scorer = tiny()
    with torch.no_grad():
        scorer.net.head.bias.add_(1.5)
    save_checkpoint(FAMILY, scorer, tmp_path / "ckpt")
    assert (tmp_path / "ckpt" / HEAD_FILE).is_file() and (tmp_path / "ckpt" / "config.json").is_file()
    again = tiny(f"lxmert:{tmp_path / 'ckpt'},cache=false")
    v = visuals(tmp_path)
    np.testing.assert_allclose(again.score(v, ["a", "b"]), scorer.score(v, ["a", "b"]), rtol=1e-5)
    assert again.inputs == scorer.inputs and again.fingerprint == scorer.fingerprint


def test_a_backbone_directory_without_head_loads_with_a_seeded_head(tmp_path: Path) -> None:
    scorer = tiny()
    scorer.net.lxmert.save_pretrained(str(tmp_path / "hf"))
    scorer.tokenizer.save_pretrained(str(tmp_path / "hf"))
    first = tiny(f"lxmert:{tmp_path / 'hf'},backbone=resnet18-c4,image_size=64,grid=2,cache=false")
    second = tiny(f"lxmert:{tmp_path / 'hf'},backbone=resnet18-c4,image_size=64,grid=2,cache=false")
    torch.testing.assert_close(first.net.head.weight, second.net.head.weight)


def test_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(AbductError, match="takes 256-d region features, and backbone 'resnet50' gives 2048-d"):
        tiny("lxmert:tiny,backbone=resnet50")
    with pytest.raises(AbductError, match="no such directory"):
        tiny(f"lxmert:{tmp_path / 'absent'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(AbductError, match="no config.json"):
        tiny(f"lxmert:{tmp_path / 'empty'}")
    with pytest.raises(AbductError, match="needs an argument"):
        tiny("lxmert")
    with pytest.raises(AbductError, match="needs image inputs"):
        from abduct.host import ScoringEngine

        ScoringEngine(tiny(), quiet=True).score_pairs([VisualInput(context="text only")], ["x"])


@pytest.mark.parametrize("change", [{"vocab_size": 100_000_000}, {"hidden_size": 65536},
                                    {"x_layers": 100_000}, {"visual_feat_dim": 100_000_000}])
def test_a_config_claiming_a_huge_size_is_refused_before_the_network_is_built(
        tmp_path: Path, pair_data: Path, test_registry: Any, change: dict[str, int]) -> None:
    err = eval_with_changed_file(FAMILY, tmp_path / "huge", pair_data, "config.json", change, within=5.0)
    field = next(iter(change))
    assert f"config.json, field '{field}': is {change[field]}, the weights in model.safetensors have" in err, err
