"""The official UNITER checkpoint layout loads with no missing and no unexpected key.

The key list below is written out from UNITER's published model code (``model/model.py``:
``UniterModel`` with ``UniterTextEmbeddings``, ``UniterImageEmbeddings``, a BERT encoder and
pooler; ``itm_output`` of the ITM model; the pre-training heads beside them), not read off this
package's module, so the test fails if the module's names drift from the checkpoint's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from abduct import AbductError, Settings
from abduct.host import get_registry, load_model
from abduct_regions.testing import eval_with_changed_file
from abduct_regions.tokenizer import tiny_tokenizer
from abduct_testing import fast_one_line_failure
from abduct_uniter._model import FAMILY, official_keys, state_dict_problems
from abduct_uniter.network import UniterScoringNet, uniter_config

HIDDEN, INTER, LAYERS, VOCAB, POSITIONS, IMG_DIM = 32, 64, 2, 300, 64, 256


def official_state(*, with_prefix: bool = True, old_norm_names: bool = False) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)

    def t(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g) * 0.02

    norm_w, norm_b = ("gamma", "beta") if old_norm_names else ("weight", "bias")
    state: dict[str, torch.Tensor] = {
        "embeddings.word_embeddings.weight": t(VOCAB, HIDDEN),
        "embeddings.position_embeddings.weight": t(POSITIONS, HIDDEN),
        "embeddings.token_type_embeddings.weight": t(2, HIDDEN),
        f"embeddings.LayerNorm.{norm_w}": 1 + t(HIDDEN), f"embeddings.LayerNorm.{norm_b}": t(HIDDEN),
        "img_embeddings.img_linear.weight": t(HIDDEN, IMG_DIM), "img_embeddings.img_linear.bias": t(HIDDEN),
        "img_embeddings.img_layer_norm.weight": 1 + t(HIDDEN), "img_embeddings.img_layer_norm.bias": t(HIDDEN),
        "img_embeddings.pos_layer_norm.weight": 1 + t(HIDDEN), "img_embeddings.pos_layer_norm.bias": t(HIDDEN),
        "img_embeddings.pos_linear.weight": t(HIDDEN, 7), "img_embeddings.pos_linear.bias": t(HIDDEN),
        "img_embeddings.mask_embedding.weight": t(2, IMG_DIM),
        f"img_embeddings.LayerNorm.{norm_w}": 1 + t(HIDDEN), f"img_embeddings.LayerNorm.{norm_b}": t(HIDDEN),
        "pooler.dense.weight": t(HIDDEN, HIDDEN), "pooler.dense.bias": t(HIDDEN),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            state[p + name + ".weight"], state[p + name + ".bias"] = t(HIDDEN, HIDDEN), t(HIDDEN)
        state[p + "intermediate.dense.weight"], state[p + "intermediate.dense.bias"] = t(INTER, HIDDEN), t(INTER)
        state[p + "output.dense.weight"], state[p + "output.dense.bias"] = t(HIDDEN, INTER), t(HIDDEN)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            state[f"{p}{name}.{norm_w}"], state[f"{p}{name}.{norm_b}"] = 1 + t(HIDDEN), t(HIDDEN)
    if with_prefix:
        state = {f"uniter.{k}": v for k, v in state.items()}
    state["itm_output.weight"], state["itm_output.bias"] = t(2, HIDDEN), t(2)
    # pre-training heads beside the encoder in the released uniter-base.pt
    state["cls.predictions.bias"] = t(VOCAB)
    state["cls.predictions.transform.dense.weight"] = t(HIDDEN, HIDDEN)
    state["feat_regress.weight"] = t(IMG_DIM, HIDDEN)
    state["region_classifier.net.0.weight"] = t(HIDDEN, HIDDEN)
    return state


def config() -> dict[str, object]:
    return {"vocab_size": VOCAB, "hidden_size": HIDDEN, "num_hidden_layers": LAYERS, "num_attention_heads": 2,
            "intermediate_size": INTER, "max_position_embeddings": POSITIONS, "type_vocab_size": 2,
            "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "initializer_range": 0.02, "img_dim": IMG_DIM}


def net() -> UniterScoringNet:
    values = {k: v for k, v in config().items() if k != "img_dim"}
    return UniterScoringNet(uniter_config(values), img_dim=IMG_DIM)


@pytest.mark.parametrize("variant", [{}, {"with_prefix": False}, {"old_norm_names": True}])
def test_official_layout_has_no_missing_or_unexpected_key(variant: dict[str, bool]) -> None:
    state, aside = official_keys(official_state(**variant))
    assert state_dict_problems(net(), state) == ([], [])
    assert aside == sorted(["cls.predictions.bias", "cls.predictions.transform.dense.weight", "feat_regress.weight",
                            "region_classifier.net.0.weight"])
    model = net()
    result = model.load_state_dict(state, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    torch.testing.assert_close(model.uniter.img_embeddings.pos_linear.weight, state["uniter.img_embeddings.pos_linear.weight"])


def write_official_dir(directory: Path, state: dict[str, torch.Tensor]) -> Path:
    directory.mkdir(parents=True)
    torch.save(state, directory / "uniter-base.pt")
    (directory / "config.json").write_text(json.dumps(config()))
    tiny_tokenizer().save_pretrained(str(directory))
    return directory


def test_official_checkpoint_directory_scores(tmp_path: Path) -> None:
    state = official_state()
    directory = write_official_dir(tmp_path / "official", state)
    spec = f"uniter:{directory},backbone=resnet18-c4,image_size=32,grid=2,cache=false"
    scorer = load_model(spec, Settings(), get_registry()).model
    torch.testing.assert_close(scorer.net.itm_output.weight, state["itm_output.weight"])
    from abduct import VisualInput
    from abduct_testing import make_images

    paths = make_images(tmp_path / "img", 2, size=(32, 24))
    scores = scorer.score([VisualInput(str(p)) for p in paths], ["a dog", "a cat"])
    assert scores.shape == (2,) and np.isfinite(scores).all()


def test_a_checkpoint_of_another_shape_is_refused_in_one_line(tmp_path: Path) -> None:
    state = official_state()
    del state["uniter.encoder.layer.1.output.dense.weight"]
    # a renamed tensor (a third layer is refused earlier: the layer count disagrees with the config)
    state["uniter.encoder.layer.1.output.dense.kernel"] = torch.zeros(HIDDEN, INTER)
    directory = write_official_dir(tmp_path / "broken", state)
    with pytest.raises(AbductError, match=r"1 missing, e.g. \['uniter.encoder.layer.1.output.dense.weight'\]; 1 unexpected"):
        load_model(f"uniter:{directory},backbone=resnet18-c4", Settings(), get_registry())


@pytest.mark.parametrize(("change", "needle"), [
    (lambda c: {**c, "hidden_size": c["num_attention_heads"] * 3 + 1}, "not a multiple of num_attention_heads"),
    (lambda c: {**c, "img_dim": -1}, "field 'img_dim'"),
    (lambda c: {**c, "num_hidden_layers": "two"}, "field 'num_hidden_layers'"),
    (lambda c: json.dumps(c), "a JSON str, expected an object"),
])
def test_a_hostile_config_is_one_line_naming_the_field(tmp_path: Path, change: Any, needle: str) -> None:
    directory = write_official_dir(tmp_path / "hostile", official_state())
    (directory / "config.json").write_text(json.dumps(change(config())))
    with pytest.raises(AbductError, match=needle) as caught:
        load_model(f"uniter:{directory},backbone=resnet18-c4", Settings(), get_registry())
    assert "config.json" in str(caught.value) and "\n" not in str(caught.value)


def test_a_truncated_safetensors_file_is_one_line(tmp_path: Path) -> None:
    directory = write_official_dir(tmp_path / "cut", official_state())
    from safetensors.torch import save_file

    (directory / "uniter-base.pt").unlink()
    save_file(official_state(), str(directory / "model.safetensors"))
    data = (directory / "model.safetensors").read_bytes()
    (directory / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(AbductError, match="not a readable safetensors file") as caught:
        load_model(f"uniter:{directory},backbone=resnet18-c4", Settings(), get_registry())
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("change", [{"vocab_size": 100_000_000}, {"hidden_size": 65536, "num_attention_heads": 2},
                                    {"num_hidden_layers": 100_000}, {"img_dim": 100_000_000}])
def test_a_config_claiming_a_huge_size_is_refused_before_the_network_is_built(
        tmp_path: Path, pair_data: Path, test_registry: Any, change: dict[str, int]) -> None:
    err = eval_with_changed_file(FAMILY, tmp_path / "huge", pair_data, "config.json", change, within=5.0)
    field = next(iter(change))
    assert f"config.json, field '{field}': is {change[field]}, the weights in model.safetensors have" in err, err


@pytest.mark.parametrize("change", [{"size": 100_000_000}, {"pool": 65536}, {"grid": 65536}, {"max_text": 100_000}])
def test_region_settings_claiming_a_huge_size_are_refused(tmp_path: Path, pair_data: Path, test_registry: Any,
                                                         change: dict[str, int]) -> None:
    err = eval_with_changed_file(FAMILY, tmp_path / "huge", pair_data, "abduct_regions.json", change, within=5.0)
    field = next(iter(change))
    assert f"abduct_regions.json, field '{field}': is {change[field]}, at most " in err, err


def test_max_text_beyond_the_position_table_is_refused(tmp_path: Path, test_registry: Any) -> None:
    err = fast_one_line_failure(["eval", "toy-match", "--model", "uniter:tiny,max_text=1000", "--data", str(tmp_path),
                                 "--out", str(tmp_path / "out"), "--quiet"], within=5.0)
    assert "max_text=1000 is more than the 128 text positions of the weights" in err, err
