"""Building and loading T5 models and tokenizers, with no download for ``t5:tiny``.

- ``t5:tiny``: a randomly initialised tiny T5 (fixed seed, so the same weights everywhere)
  with a WordPiece tokenizer built from a fixed vocabulary (``tiny_tokenizer``);
- ``t5:DIR``: a local Hugging Face directory (``save_pretrained``; what ``abduct train t5``
  writes), read by transformers' own ``from_pretrained``;
- ``t5:NAME``: a hub name, resolved by transformers when the network allows.

Every failure is one line (``AbductError``), never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoConfig, AutoTokenizer, PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

from abduct import AbductError
from abduct_modelkit import (
    StoredSize,
    check_sizes_against_weights,
    hf_stored_shapes,
    honour_umask,
    hub_access,
    hub_cache_dir,
    hub_file_cached,
    weights_unavailable,
)

TINY = "tiny"
TINY_SEED = 0
META_FILE = "abduct_t5.json"  # the prompt template a checkpoint was trained with
DEFAULT_TEMPLATE = "clue: {context}"
T5_TYPES = ("t5", "mt5", "umt5")
# what the weights tell of the config, checked before a model of the config's size is built
# (``num_heads*d_kv``: the attention width, one product the weights store)
STORED_SIZES = (StoredSize("vocab_size", "shared.weight"), StoredSize("d_model", "shared.weight", 1),
                StoredSize("d_ff", "DenseReluDense.wo.weight", 1), StoredSize("num_heads*d_kv", "SelfAttention.q.weight"),
                StoredSize("relative_attention_num_buckets", "relative_attention_bias.weight"),
                StoredSize("num_layers", "encoder.block", None), StoredSize("num_decoder_layers", "decoder.block", None))
SPECIALS = ("<pad>", "</s>", "<unk>")  # ids 0, 1, 2 as in T5: pad is also the decoder start
# Frequent English words get one token each; anything else falls back to single characters.
WORDS = """
a an the this that these those it its is are was were be been being has have had do does did
not no and or but if then so because of in on at to from by with without for about into over
under near behind left right front back top bottom side up down out off here there someone
somebody something person people man woman men women child children kid kids dog cat animal
car bike bus boat street road beach snow forest kitchen office pool farm room house table chair
bed door window wall floor water rain sun night day light dark red green blue yellow white black
orange purple pink brown gray grey one two three four five many some all few more most other
just recently soon later probably likely maybe must might will would could can should may
left leaving left behind waiting working playing cooking eating drinking sitting standing
walking running swimming skiing reading looking wearing holding using owner owners family
friend friends worker workers party game umbrella ball bag box hat cup bottle book phone
clue inference thing things object objects place scene image picture region area
""".split()


def tiny_vocabulary() -> list[str]:
    chars = list(string.ascii_lowercase + string.digits + string.punctuation)
    return list(dict.fromkeys([*SPECIALS, *chars, *("##" + c for c in chars), *WORDS]))


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    """A lower-casing WordPiece tokenizer over ``tiny_vocabulary`` (no training, no download):
    frequent words are one token, other words split into characters; ``</s>`` ends every text."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = {token: i for i, token in enumerate(tiny_vocabulary())}
    backend = Tokenizer(models.WordPiece(vocab, unk_token="<unk>", max_input_chars_per_word=100))
    backend.normalizer = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase()])
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    backend.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")


def tiny_config(vocab_size: int, **overrides: Any) -> T5Config:
    """A T5 small enough to train in seconds on a CPU."""
    values: dict[str, Any] = dict(
        vocab_size=vocab_size, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4,
        relative_attention_num_buckets=16, relative_attention_max_distance=64, dropout_rate=0.1,
        feed_forward_proj="relu", tie_word_embeddings=True, pad_token_id=0, eos_token_id=1,
        decoder_start_token_id=0,
    )
    values.update(overrides)
    return T5Config(**values)


def build_tiny(seed: int = TINY_SEED, **overrides: Any) -> tuple[T5ForConditionalGeneration, PreTrainedTokenizerFast]:
    """``t5:tiny``: random weights from ``seed`` (the global RNG is left as it was)."""
    tokenizer = tiny_tokenizer()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = T5ForConditionalGeneration(tiny_config(len(tokenizer), **overrides))
    return model, tokenizer


@dataclass
class Loaded:
    model: Any  # a T5ForConditionalGeneration
    tokenizer: Any
    template: str | None  # the template a checkpoint was trained with, if it says
    source: str


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _looks_like_path(argument: str) -> bool:
    """A hub name is ``name`` or ``org/name``; anything else with a separator is a path."""
    return argument.startswith(("/", ".", "~")) or argument.count("/") > 1 or "\\" in argument


def _from_pretrained(source: str, where: str) -> Loaded:
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Loading weights" bar on every evaluation
    try:
        return _read_pretrained(source, where)
    finally:
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def _read_pretrained(source: str, where: str) -> Loaded:
    try:
        config = AutoConfig.from_pretrained(source)
    except Exception as exc:
        raise AbductError(f"t5:{where}: cannot read a model configuration ({_first_line(exc)})") from None
    if getattr(config, "model_type", None) not in T5_TYPES:
        raise AbductError(f"t5:{where}: the configuration is a '{getattr(config, 'model_type', None)}' model, not T5")
    local = Path(source)
    if local.is_dir() and not any((local / name).is_file() for name in TOKENIZER_FILES):
        # AutoTokenizer would fall back to something that gives every pair the same score
        raise AbductError(f"t5:{where}: {local} holds no tokenizer (expected one of {', '.join(TOKENIZER_FILES)}; "
                          "save it with tokenizer.save_pretrained)")
    try:
        stored = hf_stored_shapes(local, loader="t5 checkpoint") if local.is_dir() else None
    except AbductError as exc:
        raise AbductError(f"t5:{where}: cannot load the weights ({exc})") from None
    if stored is not None:
        heads, width = getattr(config, "num_heads", None), getattr(config, "d_kv", None)
        product = heads * width if all(type(v) is int for v in (heads, width)) else None  # type: ignore[operator]
        sizes = {**config.to_dict(), "num_heads*d_kv": product}
        check_sizes_against_weights(local / "config.json", sizes, *stored, STORED_SIZES)
    try:
        model = T5ForConditionalGeneration.from_pretrained(source)
    except Exception as exc:
        raise AbductError(f"t5:{where}: cannot load the weights ({_first_line(exc)})") from None
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
    except Exception as exc:
        raise AbductError(f"t5:{where}: cannot load the tokenizer ({_first_line(exc)}; a checkpoint with only "
                          "spiece.model needs `pip install sentencepiece`)") from None
    template = None
    meta = Path(source) / META_FILE
    if meta.is_file():
        try:
            template = str(json.loads(meta.read_text())["template"])
        except (ValueError, KeyError, TypeError) as exc:
            raise AbductError(f"{meta}: not an abduct-t5 metadata file ({_first_line(exc)})") from None
    return Loaded(model, tokenizer, template, source)


TOKENIZER_FILES = ("tokenizer.json", "spiece.model")


def load(argument: str | None) -> Loaded:
    """The model ``t5:ARGUMENT`` names (see the module's docstring)."""
    if argument is None:
        raise AbductError("t5 needs an argument: t5:tiny, t5:DIR (a Hugging Face directory) or t5:NAME (a hub name)")
    if argument == TINY:
        model, tokenizer = build_tiny()
        return Loaded(model, tokenizer, None, TINY)
    path = Path(argument).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise AbductError(f"t5:{argument}: {path} holds no config.json (expected a Hugging Face model directory, "
                              "e.g. best/ of `abduct train t5`)")
        return _from_pretrained(str(path), argument)
    if path.exists():
        raise AbductError(f"t5:{argument}: {path} is a file; expected a Hugging Face model directory")
    if _looks_like_path(argument):
        raise AbductError(f"t5:{argument}: no such directory")
    with hub_access() as hub:  # offline: from the hub cache only, or one line in seconds
        if not hub.online and hub_file_cached(argument, "config.json") is None:
            raise weights_unavailable(f"t5:{argument}", [f"a local directory {path.resolve()}",
                                                         f"hub {argument} in {hub_cache_dir()}"],
                                      how="t5:/path/to/model-dir (save_pretrained)", reason=hub.reason)
        return _from_pretrained(argument, argument)


def weights_hash(model: torch.nn.Module) -> str:
    """A digest of every parameter and buffer, in name order."""
    digest = hashlib.blake2b(digest_size=16)
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        digest.update(str(flat.dtype).encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def tokenizer_hash(tokenizer: Any) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    text = backend.to_str() if backend is not None else json.dumps(sorted(tokenizer.get_vocab().items()))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def save_checkpoint(model: T5ForConditionalGeneration, tokenizer: Any, directory: Path, template: str) -> None:
    """A directory ``t5:DIR`` loads: safetensors weights, config, tokenizer, the template."""
    from transformers.utils import logging as hf_logging

    directory.mkdir(parents=True, exist_ok=True)
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Writing model shards" bar at every checkpoint
    try:
        model.save_pretrained(str(directory))
        tokenizer.save_pretrained(str(directory))
    finally:
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
    (directory / META_FILE).write_text(json.dumps({"template": template}))
    honour_umask(directory)  # safetensors writes the weights owner-only
