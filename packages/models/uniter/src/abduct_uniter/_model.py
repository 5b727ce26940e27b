"""The ``uniter`` model: loading, saving and the factory.

- ``uniter:tiny``: 2 layers, hidden 32, 256-d (ResNet-18 third stage) region features, random weights
  from a fixed seed, the tiny tokenizer;
- ``uniter:DIR``: a directory holding UNITER's ``config.json`` (``uniter-base.json``'s keys),
  the weights as ``model.safetensors`` (what ``abduct train uniter`` writes) or an official
  ``.pt`` checkpoint (e.g. ``uniter-base.pt``; read with ``weights_only=True``), and the
  tokenizer files (UNITER uses ``bert-base-cased``'s ``vocab.txt``). Pre-training heads
  (``cls``, ``feat_regress``, ``region_classifier``) and the retrieval ``rank_output`` are set
  aside; every other key must match (``state_dict_problems``), and a checkpoint without
  ``itm_output`` starts that head from a fixed seed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from transformers import AutoTokenizer

from abduct import AbductError, DataError
from abduct.kit import read_json
from abduct_modelkit import StoredSize, check_sizes_against_weights, stored_shapes
from abduct_regions.family import scorer_factory
from abduct_regions.positions import PositionKind
from abduct_regions.scoring import InputSettings
from abduct_regions.tokenizer import tiny_tokenizer
from abduct_uniter.network import UniterScoringNet, uniter_config

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
IMG_DIM_KEY = "img_dim"  # abduct's addition to the config file (UNITER passes it in code: 2048)
HEADS_SET_ASIDE = ("cls.", "feat_regress.", "region_classifier.", "rank_output.")
CONFIG_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
               "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings",
               "type_vocab_size", "initializer_range")


def tiny_values(vocab_size: int) -> dict[str, Any]:
    return {"vocab_size": vocab_size, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
            "intermediate_size": 64, "max_position_embeddings": 128, "type_vocab_size": 2,
            # no dropout: with hidden 32 it keeps a tiny model on its initial plateau for
            # hundreds of steps (measured: loss stuck at 2 x margin after 240 steps with 0.1)
            "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}


def official_keys(state: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``state`` renamed as UNITER's own ``from_pretrained`` does (``module.`` dropped, old
    ``gamma``/``beta`` names, a missing ``uniter.`` prefix), with the heads this model does not
    use set aside (their names are returned)."""
    renamed: dict[str, Any] = {}
    for key, value in state.items():
        key = key.removeprefix("module.")
        key = key.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        renamed[key] = value
    if not any(k.startswith("uniter.") for k in renamed):
        renamed = {k if k.startswith(("itm_output.", *HEADS_SET_ASIDE)) else f"uniter.{k}": v for k, v in renamed.items()}
    aside = sorted(k for k in renamed if k.startswith(HEADS_SET_ASIDE))
    return {k: v for k, v in renamed.items() if k not in aside}, aside


def state_dict_problems(net: torch.nn.Module, state: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(missing, unexpected) keys of ``state`` for ``net`` (``itm_output`` may be missing)."""
    own = set(net.state_dict())
    missing = sorted(k for k in own - set(state) if not k.startswith("itm_output."))
    unexpected = sorted(set(state) - own)
    return missing, unexpected


_POSITIVE = (IMG_DIM_KEY, "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
             "intermediate_size", "max_position_embeddings", "type_vocab_size")


def _check_sizes(config_file: Path, values: dict[str, Any]) -> None:
    """Sizes are positive integers and the heads divide the hidden size (one line naming the field)."""
    for key in _POSITIVE:
        value = values.get(key)
        if key in values and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise DataError(f"is {value!r}, expected a positive integer", file=config_file, field=key)
    hidden, heads = values.get("hidden_size"), values.get("num_attention_heads")
    if isinstance(hidden, int) and isinstance(heads, int) and hidden % heads:
        raise DataError(f"{hidden} is not a multiple of num_attention_heads {heads}", file=config_file,
                        field="hidden_size")


# what the weights tell of the config, checked before a network of the config's size is built
STORED_SIZES = (StoredSize("vocab_size", "embeddings.word_embeddings.weight"),
                StoredSize("hidden_size", "embeddings.word_embeddings.weight", 1),
                StoredSize("max_position_embeddings", "embeddings.position_embeddings.weight"),
                StoredSize("type_vocab_size", "embeddings.token_type_embeddings.weight"),
                StoredSize(IMG_DIM_KEY, "img_embeddings.img_linear.weight", 1),
                StoredSize("num_hidden_layers", "encoder.layer", None),
                StoredSize("intermediate_size", "encoder.layer.0.intermediate.dense.weight"))


def _weights_file(directory: Path) -> Path:
    if (directory / WEIGHTS_FILE).is_file():
        return directory / WEIGHTS_FILE
    found = sorted(directory.glob("*.pt")) + sorted(directory.glob("*.pth")) + sorted(directory.glob("*.bin"))
    if not found:
        raise AbductError(f"uniter:{directory}: no weights ({WEIGHTS_FILE} or an official .pt checkpoint)")
    return found[0]


def _read_weights(file: Path) -> dict[str, Any]:
    from abduct_modelkit import load_weights_only

    state = load_weights_only(file, loader="uniter checkpoint")
    if isinstance(state, dict) and isinstance(state.get("model"), dict):
        state = state["model"]
    if not isinstance(state, dict):
        raise AbductError(f"{file}: expected a state dict, got {type(state).__name__}")
    return dict(state)


class UniterFamily:
    name = "uniter"
    position_kind: PositionKind = "uniter"
    default_inputs = InputSettings()

    def build_tiny(self, seed: int) -> tuple[torch.nn.Module, Any]:
        tokenizer = tiny_tokenizer()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            net = UniterScoringNet(uniter_config(tiny_values(len(tokenizer))), img_dim=256)
        return net, tokenizer

    def load_dir(self, directory: Path, seed: int) -> tuple[torch.nn.Module, Any]:
        config_file = directory / CONFIG_FILE
        if not config_file.is_file():
            raise AbductError(f"uniter:{directory}: no {CONFIG_FILE} (UNITER's model configuration)")
        values = read_json(config_file, "UNITER configuration")
        if not isinstance(values, dict):
            raise AbductError(f"{config_file}: not a UNITER configuration (a JSON {type(values).__name__}, "
                              "expected an object)")
        _check_sizes(config_file, values)
        weights = _weights_file(directory)
        try:
            img_dim = int(values.pop(IMG_DIM_KEY, 2048))
            config = uniter_config({k: v for k, v in values.items() if k in CONFIG_KEYS})
        except Exception as exc:  # transformers' strict config fields raise their own error type
            raise AbductError(f"{config_file}: not a UNITER configuration ({str(exc).splitlines()[0]})") from None
        shapes, _ = official_keys(stored_shapes(weights, loader="uniter checkpoint"))
        check_sizes_against_weights(config_file, {**config.to_dict(), IMG_DIM_KEY: img_dim}, weights, shapes,
                                    STORED_SIZES)
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                net = UniterScoringNet(config, img_dim=img_dim)
        except Exception as exc:
            raise AbductError(f"{config_file}: not a UNITER configuration ({str(exc).splitlines()[0]})") from None
        state, _ = official_keys(_read_weights(weights))
        missing, unexpected = state_dict_problems(net, state)
        if missing or unexpected:
            raise AbductError(f"uniter:{directory}: the weights do not fit the configuration "
                              f"({len(missing)} missing, e.g. {missing[:2]}; {len(unexpected)} unexpected, e.g. {unexpected[:2]})")
        try:
            net.load_state_dict(state, strict=False)
        except RuntimeError as exc:
            raise AbductError(f"uniter:{directory}: {str(exc).splitlines()[0]}") from None
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(directory))
        except Exception as exc:
            raise AbductError(f"uniter:{directory}: cannot load the tokenizer ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
        return net, tokenizer

    def save_dir(self, net: torch.nn.Module, tokenizer: Any, directory: Path) -> None:
        from safetensors.torch import save_file

        assert isinstance(net, UniterScoringNet)
        config = net.uniter.config.to_dict()
        values = {k: config[k] for k in CONFIG_KEYS if k in config}
        (directory / CONFIG_FILE).write_text(json.dumps({**values, IMG_DIM_KEY: net.visual_dim}, indent=1))
        save_file({k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}, str(directory / WEIGHTS_FILE))
        tokenizer.save_pretrained(str(directory))


FAMILY = UniterFamily()


make_uniter = scorer_factory(FAMILY, "make_uniter", """``uniter:tiny|DIR[,backbone=resnet50][,backbone_weights=FILE][,image_size=N][,grid=N]
    [,features=FILE][,max_boxes=N][,max_text=N][,cache=false]`` (see abduct-regions).""")
