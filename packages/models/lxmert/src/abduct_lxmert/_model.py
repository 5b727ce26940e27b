"""The ``lxmert`` model: transformers' ``LxmertModel`` and a scoring head over its pooled output.

- ``lxmert:tiny``: 1 language, 1 cross-modality and 1 vision layer, hidden 32, 256-d
  (ResNet-18 third stage) region features; random weights from a fixed seed;
- ``lxmert:DIR``: a Hugging Face LXMERT directory (``config.json`` and weights, e.g.
  ``unc-nlp/lxmert-base-uncased`` saved locally, or what ``abduct train lxmert`` writes) with its
  tokenizer; the scoring head is read from ``score_head.safetensors`` when the directory has
  one (a trained model), else starts from a fixed seed (a pretrained backbone to fine-tune).

The head is one linear layer over the pooled ``[CLS]`` output: a plausibility score for
Sherlock's triplet loss, and, over the four choices' scores, CoSIm's 4-way classifier.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from transformers import AutoTokenizer, LxmertConfig, LxmertModel

from abduct import AbductError
from abduct_modelkit import StoredSize, check_sizes_against_weights, hf_stored_shapes
from abduct_regions.family import scorer_factory
from abduct_regions.positions import PositionKind
from abduct_regions.scoring import InputSettings
from abduct_regions.tokenizer import tiny_tokenizer

HEAD_FILE = "score_head.safetensors"
# what the weights tell of the config, checked before a network of the config's size is built
STORED_SIZES = (StoredSize("vocab_size", "embeddings.word_embeddings.weight"),
                StoredSize("hidden_size", "embeddings.word_embeddings.weight", 1),
                StoredSize("max_position_embeddings", "embeddings.position_embeddings.weight"),
                StoredSize("type_vocab_size", "embeddings.token_type_embeddings.weight"),
                StoredSize("visual_feat_dim", "visn_fc.visn_fc.weight", 1),
                StoredSize("visual_pos_dim", "visn_fc.box_fc.weight", 1),
                StoredSize("intermediate_size", "intermediate.dense.weight"),
                StoredSize("l_layers", "encoder.layer", None), StoredSize("x_layers", "encoder.x_layers", None),
                StoredSize("r_layers", "encoder.r_layers", None))


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


class LxmertScoringNet(torch.nn.Module):
    """LxmertModel + ``head`` (hidden -> 1) over the pooled output."""

    def __init__(self, backbone: LxmertModel) -> None:
        super().__init__()
        self.lxmert = backbone
        self.head = torch.nn.Linear(backbone.config.hidden_size, 1)
        self.visual_dim = int(backbone.config.visual_feat_dim)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor,
                visual_feats: torch.Tensor, visual_pos: torch.Tensor, visual_mask: torch.Tensor) -> torch.Tensor:
        out = self.lxmert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                          visual_feats=visual_feats, visual_pos=visual_pos, visual_attention_mask=visual_mask,
                          return_dict=True)
        scores: torch.Tensor = self.head(out.pooled_output).squeeze(-1)
        return scores


def tiny_config(vocab_size: int) -> LxmertConfig:
    return LxmertConfig(vocab_size=vocab_size, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                        l_layers=1, x_layers=1, r_layers=1, visual_feat_dim=256, visual_pos_dim=4,
                        max_position_embeddings=128, num_qa_labels=2, num_object_labels=2, num_attr_labels=2,
                        # no dropout: at hidden 32 it holds a tiny model on its initial plateau
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


class LxmertFamily:
    name = "lxmert"
    position_kind: PositionKind = "lxmert"
    default_inputs = InputSettings()

    def build_tiny(self, seed: int) -> tuple[torch.nn.Module, Any]:
        tokenizer = tiny_tokenizer()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            net = LxmertScoringNet(LxmertModel(tiny_config(len(tokenizer))))
        return net, tokenizer

    def load_dir(self, directory: Path, seed: int) -> tuple[torch.nn.Module, Any]:
        from transformers.utils import logging as hf_logging

        if not (directory / "config.json").is_file():
            raise AbductError(f"lxmert:{directory}: no config.json (expected a Hugging Face LXMERT directory)")
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        try:
            config = LxmertConfig.from_pretrained(str(directory))
        except Exception as exc:
            raise AbductError(f"lxmert:{directory}: cannot read config.json ({_first_line(exc)})") from None
        stored = hf_stored_shapes(directory, loader="lxmert checkpoint")
        if stored is not None:
            check_sizes_against_weights(directory / "config.json", config.to_dict(), *stored, STORED_SIZES)
        try:
            backbone = LxmertModel.from_pretrained(str(directory), config=config)
        except Exception as exc:
            raise AbductError(f"lxmert:{directory}: cannot load the weights ({_first_line(exc)})") from None
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(directory))
        except Exception as exc:
            raise AbductError(f"lxmert:{directory}: cannot load the tokenizer ({_first_line(exc)})") from None
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            net = LxmertScoringNet(backbone)
        head = directory / HEAD_FILE
        if head.is_file():
            from safetensors.torch import load_file

            try:
                net.head.load_state_dict(load_file(str(head)))
            except Exception as exc:
                raise AbductError(f"{head}: not this model's scoring head ({_first_line(exc)})") from None
        return net, tokenizer

    def save_dir(self, net: torch.nn.Module, tokenizer: Any, directory: Path) -> None:
        from safetensors.torch import save_file

        assert isinstance(net, LxmertScoringNet)
        net.lxmert.save_pretrained(str(directory))
        tokenizer.save_pretrained(str(directory))
        save_file({k: v.detach().cpu().contiguous() for k, v in net.head.state_dict().items()},
                  str(directory / HEAD_FILE))


FAMILY = LxmertFamily()


make_lxmert = scorer_factory(FAMILY, "make_lxmert", """``lxmert:tiny|DIR[,backbone=resnet50][,backbone_weights=FILE][,image_size=N][,grid=N]
    [,features=FILE][,max_boxes=N][,max_text=N][,cache=false]`` (see abduct-regions).""")
