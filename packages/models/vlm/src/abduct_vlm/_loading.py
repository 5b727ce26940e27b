"""Finding and loading an image-text-to-text model: ``vlm:DIR``, ``vlm:NAME`` (a hub name,
when the network allows) or ``vlm:tiny[-llava|-qwen2-vl]`` (built locally, ``_tiny``).

The configuration is read first, so a directory holding another kind of model (a T5, a
CLIP) is refused with one line before any weight is read. Every failure is an AbductError.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abduct import AbductError
from abduct.kit import default_cache_dir
from abduct_vlm._tiny import TINY_NAMES, tiny_directory

# Files read whole into the fingerprint; larger ones by size and their first and last MiB,
# so a 15 GB checkpoint is identified without reading it all.
WHOLE_FILE_LIMIT = 64 << 20
EDGE = 1 << 20


@dataclass
class Loaded:
    model: Any
    processor: Any
    source: str
    model_type: str
    fingerprint: str


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def image_text_types() -> set[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    return set(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)


def directory_digest(directory: Path) -> str:
    """A digest of a model directory's files (see ``WHOLE_FILE_LIMIT``)."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith(".")):
        size = path.stat().st_size
        digest.update(f"{path.relative_to(directory)}\x00{size}\x00".encode())
        with open(path, "rb") as handle:
            if size <= WHOLE_FILE_LIMIT:
                digest.update(handle.read())
            else:
                digest.update(handle.read(EDGE))
                handle.seek(size - EDGE)
                digest.update(handle.read(EDGE))
    return digest.hexdigest()


# Where a processor's chat template is stored, newest layout first (named in errors).
TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json", "processor_config.json", "tokenizer_config.json")


def chat_prompt(processor: Any, text: str, images: int) -> str:
    """The processor's chat format for one user turn: ``images`` images, then ``text``
    (the plain text for models without a chat template, such as BLIP-2)."""
    if getattr(processor, "chat_template", None) is None:
        return text
    content = [{"type": "image"} for _ in range(images)] + [{"type": "text", "text": text}]
    return str(processor.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True,
                                             tokenize=False))


def template_file(source: str) -> str:
    """The file a local model's chat template comes from (the directory itself when unsure)."""
    directory = Path(source)
    found = next((directory / name for name in TEMPLATE_FILES if (directory / name).is_file()), None)
    return str(found or directory)


def check_chat_template(processor: Any, where: str, template: str) -> None:
    """Render the chat template once, before any weight is read or anything generated: a
    template that raises, has a syntax error or trips jinja's sandbox (a hostile checkpoint
    reaching for ``__class__``) is one line naming the checkpoint and the template."""
    try:  # one image: what every image-text model takes (some templates refuse several, legitimately)
        chat_prompt(processor, "a probe", 1)
    except Exception as exc:  # jinja's TemplateError/SecurityError, and whatever the template raises
        raise AbductError(f"{where}: the chat template ({template}) fails: {first_line(exc)}") from None


def resolve(argument: str | None, tiny_root: Path | None = None) -> tuple[str, bool]:
    """(a directory or hub name, whether it is local)."""
    if argument is None:
        raise AbductError("vlm needs an argument: vlm:DIR (a Hugging Face model directory), vlm:NAME (a hub name) "
                          f"or vlm:tiny ({', '.join(TINY_NAMES)})")
    if argument in TINY_NAMES:
        return str(tiny_directory(argument, tiny_root or default_cache_dir() / "vlm")), True
    path = Path(argument).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise AbductError(f"vlm:{argument}: {path} holds no config.json (expected a Hugging Face model directory)")
        return str(path), True
    if path.exists():
        raise AbductError(f"vlm:{argument}: {path} is a file; expected a Hugging Face model directory")
    if argument.startswith(("/", ".", "~")) or argument.count("/") > 1:
        raise AbductError(f"vlm:{argument}: no such directory")
    return argument, False


def load(argument: str | None, *, device: str, dtype: str, device_map: str | None,
         tiny_root: Path | None = None) -> Loaded:
    import torch
    from transformers import AutoConfig, AutoModelForImageTextToText, AutoProcessor
    from transformers.utils import logging as hf_logging

    source, local = resolve(argument, tiny_root)
    where = f"vlm:{argument}"
    try:
        config = AutoConfig.from_pretrained(source)
    except Exception as exc:
        raise AbductError(f"{where}: cannot read a model configuration ({first_line(exc)})") from None
    model_type = str(getattr(config, "model_type", None))
    if model_type not in image_text_types():
        raise AbductError(f"{where}: the configuration is a '{model_type}' model, not an image-text-to-text model "
                          "(vlm loads e.g. LLaVA, Qwen2-VL, Idefics, BLIP-2, PaliGemma)")
    chosen = {"auto": torch.bfloat16 if device.startswith("cuda") or device_map else torch.float32,
              "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    kwargs: dict[str, Any] = {"dtype": chosen}
    if device_map is not None:
        kwargs["device_map"] = device_map
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Loading weights" bar on every run
    try:
        try:
            processor = AutoProcessor.from_pretrained(source)  # type: ignore[no-untyped-call]
        except Exception as exc:
            raise AbductError(f"{where}: cannot load the processor ({first_line(exc)})") from None
        check_chat_template(processor, where, template_file(source) if local else f"{source}'s")
        try:
            model: Any = AutoModelForImageTextToText.from_pretrained(source, **kwargs)
        except Exception as exc:
            raise AbductError(f"{where}: cannot load the weights ({first_line(exc)})") from None
    finally:
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
    if device_map is None:
        model.to(device)
    model.eval()
    identity = directory_digest(Path(source)) if local else f"hub:{source}@{getattr(config, '_commit_hash', '')}"
    return Loaded(model, processor, source, model_type, f"vlm|{model_type}|{identity}|{chosen}")
