"""``vlm:tiny``: tiny randomly initialised vision-language models, built from configs on first
use and saved as ordinary Hugging Face directories (no download), so the CLI, the demo and
the tests run a VLM offline through the same loading code as real checkpoints.

Two architectures, both multi-image: ``tiny-llava`` (LLaVA: CLIP vision tower, projector,
Llama; ``vlm:tiny`` is this one) and ``tiny-qwen2-vl`` (Qwen2-VL: dynamic resolution, M-RoPE).
``BUILDERS[name](directory, hidden=, layers=)`` builds larger ones for benchmarks.
Their tokenizer is byte-level BPE without merges (every byte one token, so any text round-trips)
plus each architecture's special tokens, and a minimal chat template in the model's own format.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from transformers import PreTrainedTokenizerFast

TINY_SEED = 0
TINY_VERSION = "1"  # bump when a builder changes: a new directory is built
DEFAULT_TINY = "tiny-llava"

LLAVA_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'user' %}USER: {% for p in m['content'] %}"
    "{% if p['type'] == 'image' %}<image>\n{% else %}{{ p['text'] }}{% endif %}{% endfor %}\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
QWEN_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for p in m['content'] %}"
    "{% if p['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ p['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def byte_tokenizer(specials: list[str], eos: str) -> PreTrainedTokenizerFast:
    """Byte-level BPE with no merges: ids 0-3 are ``<pad>``, ``<s>``, ``</s>`` and ``<unk>``, then
    ``specials``, then the 256 byte symbols."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    base = ["<pad>", "<s>", "</s>", "<unk>"]
    symbols = base + specials + sorted(pre_tokenizers.ByteLevel.alphabet())
    backend = Tokenizer(models.BPE(vocab={s: i for i, s in enumerate(symbols)}, merges=[], unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=backend, pad_token="<pad>", bos_token="<s>", eos_token=eos, unk_token="<unk>",
        additional_special_tokens=specials)


def _text_config(vocab: int, eos: int, hidden: int, layers: int) -> dict[str, Any]:
    return dict(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024, pad_token_id=0,
                bos_token_id=1, eos_token_id=eos)


def _llava(directory: Path, hidden: int = 32, layers: int = 2) -> None:
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    tokenizer = byte_tokenizer(["<image>"], eos="</s>")
    processor = LlavaProcessor(  # type: ignore[no-untyped-call]
        image_processor=CLIPImageProcessor(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28}),
        tokenizer=tokenizer, patch_size=14, vision_feature_select_strategy="default", image_token="<image>",
        num_additional_image_tokens=1, chat_template=LLAVA_TEMPLATE)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                                       image_size=28, patch_size=14, projection_dim=32),
        text_config=LlamaConfig(**_text_config(len(tokenizer), 2, hidden, layers)),
        image_token_index=tokenizer.get_vocab()["<image>"], vision_feature_select_strategy="default",
        vision_feature_layer=-1)
    model = LlavaForConditionalGeneration(config)
    model.save_pretrained(str(directory))
    processor.save_pretrained(str(directory))


def _qwen2_vl(directory: Path, hidden: int = 32, layers: int = 2) -> None:
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    specials = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>", "<|im_start|>", "<|im_end|>"]
    tokenizer = byte_tokenizer(specials, eos="<|im_end|>")
    ids: dict[str, Any] = {s: tokenizer.convert_tokens_to_ids(s) for s in specials}
    grid: dict[str, Any] = dict(patch_size=14, merge_size=2, temporal_patch_size=2)
    processor = Qwen2VLProcessor(  # type: ignore[no-untyped-call]
        image_processor=Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=56 * 56, **grid),
        video_processor=Qwen2VLVideoProcessor(min_pixels=56 * 56, max_pixels=56 * 56, **grid),
        tokenizer=tokenizer, chat_template=QWEN_TEMPLATE)
    config = Qwen2VLConfig(
        vision_config=dict(depth=2, embed_dim=32, hidden_size=32, num_heads=2, mlp_ratio=2, patch_size=14,
                           spatial_merge_size=2, temporal_patch_size=2, in_chans=3),
        text_config={**_text_config(len(tokenizer), ids["<|im_end|>"], hidden, layers),
                     "rope_scaling": {"type": "mrope", "mrope_section": [2, 2, 4]}},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    model = Qwen2VLForConditionalGeneration(config)
    model.save_pretrained(str(directory))
    processor.save_pretrained(str(directory))


BUILDERS: dict[str, Callable[..., None]] = {"tiny-llava": _llava, "tiny-qwen2-vl": _qwen2_vl}
TINY_NAMES = ("tiny", *BUILDERS)


def tiny_directory(name: str, root: Path) -> Path:
    """The directory of tiny model ``name`` under ``root``, built (atomically: into a temporary
    directory, then renamed) when it is not there yet. The weights come from a fixed seed."""
    from transformers.utils import logging as hf_logging

    name = DEFAULT_TINY if name == "tiny" else name
    target = root / f"{name}-v{TINY_VERSION}"
    if (target / "config.json").is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(TINY_SEED)
            BUILDERS[name](staging)
        try:
            os.replace(staging, target)
        except OSError:  # another process built it first
            shutil.rmtree(staging, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
    return target
