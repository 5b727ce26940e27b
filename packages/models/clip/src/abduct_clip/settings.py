"""The ``clip`` model spec and the settings it selects (pure Python: no torch here).

Grammar (the part after ``clip:``)::

    MODEL[,key=value]...[@TAG]

``MODEL`` is an open_clip architecture (``ViT-B-16``, ``RN50x64``; ``tiny`` is this
package's small test architecture), a checkpoint file (``/ckpt/best.pt``), or both as
``ARCH:FILE``. ``@TAG`` is an open_clip pretrained tag (``@openai``). Options:

- ``mode``: ``highlight`` (default), ``plain``, ``position``, ``region``, ``context``;
- ``images``: ``widescreen`` (default), ``center``, ``pad``;
- ``prefix``: ``none`` (default), ``inference``, ``clue`` — prepended as ``inference: ``;
- ``prompt``: a template holding ``{}``, or ``default`` (``an image suggesting that {}``);
- ``workers``: data-loader worker processes for image decoding (default ``min(2, cpus)``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from abduct.errors import AbductError
from abduct.spec import ModelSpec

TINY_ALIAS = "tiny"
TINY_ARCH = "abduct-tiny"
INPUT_MODES = ("highlight", "plain", "position", "region", "context")
IMAGE_PROCESSING = ("widescreen", "center", "pad")
TEXT_PREFIXES = {"none": "", "inference": "inference: ", "clue": "clue: "}
DEFAULT_PROMPT = "an image suggesting that {}"
_CHECKPOINT_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors", ".ckpt")


def default_workers() -> int:
    return min(2, os.cpu_count() or 1)


@dataclass(frozen=True)
class ClipSettings:
    """Everything that decides what a ``clip`` model computes (weights aside)."""

    arch: str | None = None
    checkpoint: str | None = None
    pretrained: str | None = None
    mode: str = "highlight"
    images: str = "widescreen"
    prefix: str = "none"
    prompt: str | None = None
    workers: int = -1  # -1: default_workers()
    explicit: frozenset[str] = frozenset()  # options the user wrote (a checkpoint's own settings yield to them)

    def __post_init__(self) -> None:
        if self.mode not in INPUT_MODES:
            raise AbductError(f"clip: unknown mode '{self.mode}' (choose from {', '.join(INPUT_MODES)})")
        if self.images not in IMAGE_PROCESSING:
            raise AbductError(
                f"clip: unknown images '{self.images}' (choose from {', '.join(IMAGE_PROCESSING)})"
            )
        if self.prefix not in TEXT_PREFIXES:
            raise AbductError(f"clip: unknown prefix '{self.prefix}' (choose from {', '.join(TEXT_PREFIXES)})")
        if self.prompt is not None and "{}" not in self.prompt:
            raise AbductError(f"clip: prompt '{self.prompt}' must contain {{}} where the text goes")
        if self.arch is None and self.checkpoint is None:
            raise AbductError("clip: give an architecture, a checkpoint file, or both (e.g. clip:ViT-B-16@openai)")
        if self.pretrained is not None and self.checkpoint is not None:
            raise AbductError("clip: give either a pretrained @tag or a checkpoint file, not both")

    @property
    def num_workers(self) -> int:
        return default_workers() if self.workers < 0 else self.workers

    @property
    def open_clip_arch(self) -> str | None:
        return TINY_ARCH if self.arch == TINY_ALIAS else self.arch

    def format_text(self, text: str) -> str:
        """The string the text tower sees: prompt template first, then the prefix."""
        if self.prompt is not None:
            text = self.prompt.replace("{}", text)
        return TEXT_PREFIXES[self.prefix] + text

    def with_options(self, **changes: object) -> ClipSettings:
        return replace(self, **changes)  # type: ignore[arg-type]

    def describe(self) -> str:
        """Preprocessing identity (part of the model fingerprint)."""
        return f"mode={self.mode}|images={self.images}|prefix={self.prefix}|prompt={self.prompt or ''}"


def _looks_like_file(text: str) -> bool:
    return "/" in text or "\\" in text or text.lower().endswith(_CHECKPOINT_SUFFIXES)


def _split_model(model: str) -> tuple[str | None, str | None]:
    """``ARCH``, ``FILE`` or ``ARCH:FILE`` -> (arch, checkpoint)."""
    head, sep, rest = model.partition(":")
    if sep and not (len(head) == 1 and rest[:1] in ("/", "\\")):  # a Windows drive is no arch
        if not head or not rest:
            raise AbductError(f"clip: '{model}' should be ARCH:CHECKPOINT")
        return head, rest
    if _looks_like_file(model):
        return None, model
    return model, None


def parse_clip_spec(spec: ModelSpec) -> ClipSettings:
    """Settings from a parsed ``clip:...`` spec (see the module docstring for the grammar)."""
    if not spec.argument:
        raise AbductError("clip needs a model, e.g. clip:tiny, clip:ViT-B-16@openai or clip:/path/best.pt")
    model, *pairs = spec.argument.split(",")
    tag = spec.tag
    if tag and "," in tag:  # options written after the tag: clip:ViT-B-16@openai,mode=plain
        tag, *more = tag.split(",")
        pairs += more
    options: dict[str, object] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq or key not in ("mode", "images", "prefix", "prompt", "workers"):
            raise AbductError(f"clip: bad option '{pair}' (expected mode=, images=, prefix=, prompt= or workers=)")
        if key == "workers":
            try:
                options[key] = int(value)
            except ValueError:
                raise AbductError(f"clip: workers must be an integer, got '{value}'") from None
        elif key == "prompt":
            options[key] = DEFAULT_PROMPT if value == "default" else value
        else:
            options[key] = value.strip()
    arch, checkpoint = _split_model(model.strip())
    return ClipSettings(
        arch=arch, checkpoint=checkpoint, pretrained=tag, explicit=frozenset(options), **options  # type: ignore[arg-type]
    )
