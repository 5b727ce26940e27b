"""Tiny random BERT models and generated sentences, for this package's tests and for
``benchmarks/caption_metrics.py`` (hence in src, not in tests/).

Weights cannot be downloaded here, so tests build a Hugging Face format directory from a
config and a small word-level vocabulary: the real loading and scoring code runs on it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
WORDS = (
    "a an the man woman dog dogs cat horse riding rides ride play plays playing in on snow "
    "street park red blue green two three people person car is are with and of ball beach "
    "water running sitting standing holding small big young old white black table what who "
    "how many it do does"
).split()


def write_vocab(directory: Path, words: Iterable[str] = WORDS) -> Path:
    """``vocab.txt``: the special tokens, then ``words`` in order (ids are line numbers)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "vocab.txt"
    path.write_text("\n".join([*SPECIAL_TOKENS, *dict.fromkeys(words)]) + "\n", encoding="utf-8")
    return path


def build_tiny_bert(
    directory: Path,
    *,
    words: Iterable[str] = WORDS,
    hidden_size: int = 32,
    num_layers: int = 2,
    type_vocab_size: int = 2,
    classifier: bool = False,
    seed: int = 0,
) -> Path:
    """Save a random BERT (a 2-label classifier when ``classifier``) and its tokenizer."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizer

    vocab = write_vocab(directory, words)
    tokenizer = BertTokenizer(str(vocab), do_lower_case=True, model_max_length=128)
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=hidden_size, num_hidden_layers=num_layers,
        num_attention_heads=2, intermediate_size=2 * hidden_size, max_position_embeddings=128,
        type_vocab_size=type_vocab_size, num_labels=2,  # type: ignore[call-arg]
    )
    torch.manual_seed(seed)
    random.seed(seed)
    architecture: Any = BertForSequenceClassification if classifier else BertModel  # untyped in transformers
    model = architecture(config)
    model.eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_tiny_distilbert(directory: Path, *, words: Iterable[str] = WORDS, hidden_size: int = 32,
                          num_layers: int = 6, seed: int = 0) -> Path:
    """Save a random DistilBERT and its tokenizer: with 6 layers it has the layer bert-score
    uses for ``distilbert-base-uncased`` (5), so a copy in a hub cache under that name runs the
    ``bertscore-hungarian`` defaults."""
    import torch
    from transformers import DistilBertConfig, DistilBertModel, DistilBertTokenizer

    vocab = write_vocab(directory, words)
    tokenizer = DistilBertTokenizer(str(vocab), do_lower_case=True, model_max_length=128)
    config = DistilBertConfig(vocab_size=len(tokenizer), dim=hidden_size, n_layers=num_layers, n_heads=2,
                              hidden_dim=2 * hidden_size, max_position_embeddings=128)
    torch.manual_seed(seed)
    model: Any = DistilBertModel(config)  # untyped in transformers
    model.eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


_PUNCT = (",", ".", "!", "?", ";", " -", "'s")


def random_sentence(rng: random.Random, low: int = 3, high: int = 12) -> str:
    """Words from ``WORDS`` with occasional capitals and punctuation."""
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    if rng.random() < 0.3:
        words[0] = words[0].capitalize()
    if rng.random() < 0.4:
        i = rng.randrange(len(words))
        words[i] += rng.choice(_PUNCT)
    return " ".join(words) + rng.choice(["", ".", " .", "!"])


def generated_data(
    n: int, seed: int = 0, max_refs: int = 5, related: bool = False
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """``n`` random predictions with 1..``max_refs`` random references each. With ``related``
    a prediction is its first reference with about a third of the words replaced, so that
    higher-order n-grams match as in real captioning output."""
    rng = random.Random(seed)
    predictions: dict[str, str] = {}
    references: dict[str, list[str]] = {}
    for i in range(n):
        key = f"s{i:05d}"
        references[key] = [random_sentence(rng) for _ in range(rng.randint(1, max_refs))]
        if related:
            words = references[key][0].split()
            predictions[key] = " ".join(rng.choice(WORDS) if rng.random() < 0.33 else w for w in words)
        else:
            predictions[key] = random_sentence(rng)
    return predictions, references
