"""The ``clip`` model spec and the settings it selects (pure Python, no torch).

Grammar (the core parses it; see ``abduct.contract.spec``)::

    clip:MODEL[@TAG][,key=value]...

``MODEL`` is an open_clip architecture (``ViT-B-16``, ``RN50x64``; ``tiny`` is this
package's small test architecture), a checkpoint file (``/ckpt/best.pt``), or both as
``ARCH:FILE``. ``@TAG`` is an open_clip pretrained tag (``@openai``). The options are the
keyword-only parameters of the factory ``abduct_clip.factory.make_clip`` (typed and checked by
the core), whose defaults are ``ClipSettings``'s, declared there once:

- ``mode``: ``highlight`` (default), ``plain``, ``position``, ``region``, ``context``;
- ``images``: ``widescreen`` (default), ``center``, ``pad``;
- ``prefix``: ``none`` (default), ``inference``, ``clue`` — prepended as ``inference: ``;
- ``prompt``: a template holding ``{}``, or ``default`` (``an image suggesting that {}``);
- ``workers``: data-loader worker processes for image decoding (default ``min(2, cpus)``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, get_args

from abduct import AbductError, Spec

InputMode = Literal["highlight", "plain", "position", "region", "context"]
ImageProcessing = Literal["widescreen", "center", "pad"]
TextPrefix = Literal["none", "inference", "clue"]

TINY_ALIAS = "tiny"
TINY_ARCH = "abduct-tiny"
INPUT_MODES: tuple[str, ...] = get_args(InputMode)
IMAGE_PROCESSING: tuple[str, ...] = get_args(ImageProcessing)
TEXT_PREFIXES = {"none": "", "inference": "inference: ", "clue": "clue: "}
DEFAULT_PROMPT = "an image suggesting that {}"
_CHECKPOINT_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors", ".ckpt")
OPTIONS = ("mode", "images", "prefix", "prompt", "workers")


def default_workers() -> int:
    return min(2, os.cpu_count() or 1)


@dataclass(frozen=True)
class ClipSettings:
    """Everything that decides what a ``clip`` model computes (weights aside)."""

    arch: str | None = None
    checkpoint: str | None = None
    pretrained: str | None = None
    mode: InputMode = "highlight"
    images: ImageProcessing = "widescreen"
    prefix: TextPrefix = "none"
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


# The options a ``clip`` spec takes (``make_clip``'s keyword-only parameters) and their defaults.
OPTION_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(ClipSettings) if f.name in OPTIONS}


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


def clip_settings(spec: Spec, **options: Any) -> ClipSettings:
    """Settings from a ``clip:...`` spec (model and tag) and its typed options (``make_clip``'s).

    An option counts as written by the user (and so wins over a checkpoint's own settings)
    when the spec names it or when it differs from its default."""
    if not spec.argument:
        raise AbductError("clip needs a model, e.g. clip:tiny, clip:ViT-B-16@openai or clip:/path/best.pt")
    unknown = sorted(set(options) - set(OPTION_DEFAULTS))
    if unknown:
        raise TypeError(f"clip_settings() got unexpected options {unknown}")
    given = {**OPTION_DEFAULTS, **options}
    named = {key for key, _ in spec.options}
    explicit = frozenset(k for k, v in given.items() if k in named or v != OPTION_DEFAULTS[k])
    if given["prompt"] == "default":
        given["prompt"] = DEFAULT_PROMPT
    arch, checkpoint = _split_model(spec.argument.strip())
    return ClipSettings(arch=arch, checkpoint=checkpoint, pretrained=spec.tag, explicit=explicit, **given)
