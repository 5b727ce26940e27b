"""UNITER written with transformers' BERT blocks, laid out as the official code so that its
checkpoints load key for key.

State-dict layout (``uniter-base``: hidden 768, 12 layers, 2048-d features, 7-d positions)::

    uniter.embeddings.{word_embeddings, position_embeddings, token_type_embeddings, LayerNorm}
    uniter.img_embeddings.{img_linear, img_layer_norm, pos_linear, pos_layer_norm,
                           mask_embedding, LayerNorm}
    uniter.encoder.layer.N.{attention.self.{query,key,value}, attention.output.{dense,LayerNorm},
                            intermediate.dense, output.{dense,LayerNorm}}
    uniter.pooler.dense
    itm_output                                  (image-text matching: 2 logits)

Text tokens come first, then the region tokens; an image token is
``LayerNorm(img_layer_norm(img_linear(f)) + pos_layer_norm(pos_linear(p)) + type_1)``. All text
tokens take token type 0 and image tokens type 1, as in UNITER's pre-training (a Sherlock
clue and inference are one text, ``clue [SEP] inference``). The score is the ITM head's
``logit(match) - logit(no match)``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from transformers import BertConfig
from transformers.models.bert.modeling_bert import BertLayer, BertPooler

POSITION_DIM = 7


def uniter_config(values: dict[str, Any]) -> BertConfig:
    """A BERT configuration from UNITER's config file (``uniter-base.json``'s keys)."""
    config = BertConfig(**values)
    config._attn_implementation = "eager"  # padding masks as additive 4-d masks, on every backend
    return config


class UniterTextEmbeddings(nn.Module):
    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=0)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        types = torch.zeros_like(input_ids)
        out = self.word_embeddings(input_ids) + self.position_embeddings(positions) + self.token_type_embeddings(types)
        result: torch.Tensor = self.dropout(self.LayerNorm(out))
        return result


class UniterImageEmbeddings(nn.Module):
    def __init__(self, config: BertConfig, img_dim: int) -> None:
        super().__init__()
        self.img_linear = nn.Linear(img_dim, config.hidden_size)
        self.img_layer_norm = nn.LayerNorm(config.hidden_size, eps=1e-12)
        self.pos_layer_norm = nn.LayerNorm(config.hidden_size, eps=1e-12)
        self.pos_linear = nn.Linear(POSITION_DIM, config.hidden_size)
        self.mask_embedding = nn.Embedding(2, img_dim, padding_idx=0)  # masked-region pre-training; unused here
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, feats: torch.Tensor, positions: torch.Tensor, type_embedding: torch.Tensor) -> torch.Tensor:
        image = self.img_layer_norm(self.img_linear(feats))
        where = self.pos_layer_norm(self.pos_linear(positions))
        result: torch.Tensor = self.dropout(self.LayerNorm(image + where + type_embedding))
        return result


class UniterEncoder(nn.Module):
    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(config) for _ in range(config.num_hidden_layers)])  # type: ignore[no-untyped-call]

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        additive = (1.0 - mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
        for layer in self.layer:
            out = layer(hidden, attention_mask=additive)
            hidden = out[0] if isinstance(out, tuple) else out
        return hidden


class UniterModel(nn.Module):
    def __init__(self, config: BertConfig, img_dim: int) -> None:
        super().__init__()
        self.config = config
        self.embeddings = UniterTextEmbeddings(config)
        self.img_embeddings = UniterImageEmbeddings(config, img_dim)
        self.encoder = UniterEncoder(config)
        self.pooler = BertPooler(config)  # type: ignore[no-untyped-call]

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, visual_feats: torch.Tensor,
                visual_pos: torch.Tensor, visual_mask: torch.Tensor) -> torch.Tensor:
        text = self.embeddings(input_ids)
        image_type = self.embeddings.token_type_embeddings(
            torch.ones(visual_feats.shape[:2], dtype=torch.long, device=visual_feats.device))
        image = self.img_embeddings(visual_feats, visual_pos, image_type)
        hidden = self.encoder(torch.cat([text, image], dim=1), torch.cat([attention_mask.float(), visual_mask], dim=1))
        pooled: torch.Tensor = self.pooler(hidden)
        return pooled


class UniterScoringNet(nn.Module):
    """``uniter`` + the ITM head ``itm_output``; one score per pair."""

    def __init__(self, config: BertConfig, img_dim: int = 2048) -> None:
        super().__init__()
        self.uniter = UniterModel(config, img_dim)
        self.itm_output = nn.Linear(config.hidden_size, 2)
        self.visual_dim = img_dim
        self.apply(self._init)

    def _init(self, module: nn.Module) -> None:
        """BERT's initialisation (normal 0.02, zero biases, unit LayerNorms)."""
        std = self.uniter.config.initializer_range
        if isinstance(module, (nn.Linear, nn.Embedding)):
            module.weight.data.normal_(0.0, std)
        if isinstance(module, nn.Linear) and module.bias is not None:
            module.bias.data.zero_()
        if isinstance(module, nn.LayerNorm):
            module.weight.data.fill_(1.0)
            module.bias.data.zero_()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor,
                visual_feats: torch.Tensor, visual_pos: torch.Tensor, visual_mask: torch.Tensor) -> torch.Tensor:
        pooled = self.uniter(input_ids, attention_mask, visual_feats, visual_pos, visual_mask)
        logits = self.itm_output(pooled)
        scores: torch.Tensor = logits[:, 1] - logits[:, 0]
        return scores
