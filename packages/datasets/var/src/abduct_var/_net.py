"""The small VAR generator: event embeddings -> a transformer encoder over the chain (the
target slot masked when it is the hypothesis) -> a small transformer decoder writing words.

Words are lowercased alphanumeric tokens (what PTB tokenisation keeps, punctuation aside); the
vocabulary is the training sentences' words, stored in the checkpoint.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch
from torch import nn

from abduct_var.records import MAX_EVENTS

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")
MAX_WORDS = 24
HEADS = 4
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(sentence: str) -> list[str]:
    return _WORD.findall(sentence.lower())


def build_vocab(sentences: Sequence[str]) -> list[str]:
    seen = dict.fromkeys(w for s in sentences for w in words(s))
    return [*SPECIALS, *sorted(seen)]


def encode_words(sentence: str, index: dict[str, int]) -> list[int]:
    return [BOS, *[index.get(w, UNK) for w in words(sentence)][: MAX_WORDS - 2], EOS]


def decode_words(ids: Sequence[int], vocab: Sequence[str]) -> str:
    out = []
    for i in ids:
        if i == EOS:
            break
        if i > UNK:
            out.append(vocab[i])
    text = " ".join(out)
    return text[:1].upper() + text[1:] + "." if text else ""


class ChainGenerator(nn.Module):
    def __init__(self, clip_dim: int, vocab_size: int, width: int = 64, layers: int = 2, heads: int = HEADS) -> None:
        super().__init__()
        self.project = nn.Linear(clip_dim, width)
        self.position = nn.Embedding(MAX_EVENTS, width)
        self.mask = nn.Parameter(torch.zeros(width))
        self.target = nn.Embedding(2, width)  # 1 marks the slot to write about
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True), layers,
            enable_nested_tensor=False)
        self.embed = nn.Embedding(vocab_size, width)
        self.word_position = nn.Embedding(MAX_WORDS, width)
        self.decoder = nn.TransformerDecoder(
            nn.TransformerDecoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True), layers)
        self.out = nn.Linear(width, vocab_size)

    def memory(self, events: torch.Tensor, masked: torch.Tensor, target: torch.Tensor,
               padding: torch.Tensor) -> torch.Tensor:
        """``events [B, S, D]``, ``masked``/``padding`` ``[B, S]`` bools, ``target [B]`` slot indices."""
        b, s, _ = events.shape
        x = torch.where(masked[..., None], self.mask.expand(b, s, -1), self.project(events))
        marks = torch.zeros((b, s), dtype=torch.long, device=events.device)
        marks[torch.arange(b), target] = 1
        x = x + self.position(torch.arange(s, device=events.device))[None] + self.target(marks)
        encoded: torch.Tensor = self.encoder(x, src_key_padding_mask=padding)
        return encoded

    def logits(self, memory: torch.Tensor, padding: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        n = tokens.shape[1]
        x = self.embed(tokens) + self.word_position(torch.arange(n, device=tokens.device))[None]
        causal = torch.triu(torch.ones((n, n), dtype=torch.bool, device=tokens.device), diagonal=1)
        hidden = self.decoder(x, memory, tgt_mask=causal, tgt_key_padding_mask=tokens == PAD,
                              memory_key_padding_mask=padding, tgt_is_causal=True)
        result: torch.Tensor = self.out(hidden)
        return result

    @torch.no_grad()
    def greedy(self, memory: torch.Tensor, padding: torch.Tensor, max_words: int = MAX_WORDS) -> list[list[int]]:
        b = memory.shape[0]
        tokens = torch.full((b, 1), BOS, dtype=torch.long, device=memory.device)
        done = torch.zeros(b, dtype=torch.bool, device=memory.device)
        for _ in range(max_words - 1):
            nxt = self.logits(memory, padding, tokens)[:, -1].argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            done |= nxt == EOS
            if bool(done.all()):
                break
        return [row[1:] for row in tokens.tolist()]
