"""Specs: how a user names and configures any component.

One grammar for models, tasks, metrics and datasets::

    name[:argument][@tag][,key=value...]

e.g. ``random``, ``clip:ViT-B-16@openai,mode=plain``, ``clip:/runs/x/best.pt``,
``bertscore,model=roberta-large,num_layers=17``. A value holding a comma is quoted:
``prompt="an image, then {}"``. A trailing ``@tag`` counts only if it holds no path
separator, so ``clip:/data/run@3/ckpt.pt`` keeps its ``@``. Values stay text here; the
component's factory signature types them (``abduct.contract.options``).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field

from abduct.contract.errors import AbductError


@dataclass(frozen=True)
class Spec:
    """A parsed ``name[:argument][@tag][,key=value...]``; options keep their text values."""

    name: str
    argument: str | None = None
    tag: str | None = None
    options: tuple[tuple[str, str], ...] = field(default=())

    @classmethod
    def parse(cls, text: str) -> Spec:
        """Read ``name[:argument][@tag][,key=value...]``; one-line errors for what is not one."""
        return cls(*_parse_spec(text))

    def with_options(self, pairs: tuple[str, ...] | list[str]) -> Spec:
        """This spec with ``key=value`` pairs added (the CLI's ``-o`` synonym)."""
        extra = tuple(_parse_option(p, p) for p in pairs)
        return Spec(self.name, self.argument, self.tag, self.options + extra)

    def option_dict(self) -> dict[str, str]:
        return _option_dict(self.options, str(self))

    def __str__(self) -> str:
        return _format_spec(self.name, self.argument, self.tag, self.options)


@dataclass(frozen=True)
class Settings:
    """Run-time settings every factory receives (``--device``, ``--batch-size``, ``--seed``)."""

    device: str = "cpu"
    batch_size: int = 64
    seed: int = 0

    def torch_device(self) -> str:
        """``device`` checked, with ``auto`` resolved (cuda when torch sees a GPU, else cpu);
        one-line errors for an unknown device or cuda without a GPU. Only torch models call
        this, so only they import torch."""
        torch = importlib.import_module("torch")  # by name: the core does not depend on torch
        if self.device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        try:
            kind = torch.device(self.device).type
        except (RuntimeError, ValueError):
            raise AbductError(f"unknown device '{self.device}' (expected cpu, cuda, cuda:N or auto)") from None
        if kind == "cuda" and not torch.cuda.is_available():
            raise AbductError(f"device '{self.device}' asked for, but torch sees no CUDA GPU (use --device cpu or auto)")
        return self.device


# -- the text grammar ------------------------------------------------------------------------------
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_QUOTES = ("'", '"')


def split_outside_quotes(text: str, separator: str = ",") -> list[str]:
    """Split at ``separator`` outside quotes (spec options; the parts of a composite spec)."""
    parts: list[str] = []
    start = 0  # where the current part begins
    quote: str | None = None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in _QUOTES:
            quote = char
        elif char == separator:
            parts.append(text[start:i])
            start = i + 1
    if quote:
        raise AbductError(f"unclosed {quote} in '{text}'")
    parts.append(text[start:])
    return parts


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] == text[0]:
        return text[1:-1]
    return text


def _parse_option(pair: str, source: str) -> tuple[str, str]:
    """``key=value`` -> (key with ``-`` as ``_``, unquoted value)."""
    key, sep, value = pair.partition("=")
    key = key.strip()
    if not sep or not _KEY.match(key):
        raise AbductError(f"'{pair}' in '{source}' is not key=value")
    return key.replace("-", "_"), _unquote(value)


def _parse_spec(text: str) -> tuple[str, str | None, str | None, tuple[tuple[str, str], ...]]:
    """``(name, argument, tag, options)`` of a spec's text; a trailing ``@tag`` counts only if
    it holds no path separator, so ``clip:/data/run@3/ckpt.pt`` keeps its ``@``."""
    text = text.strip()
    if not text:
        raise AbductError("empty spec; expected name[:argument][@tag][,key=value...]")
    head, *pairs = split_outside_quotes(text)
    name, sep, rest = head.partition(":")
    argument: str | None = rest if sep else None
    tag = None
    base, at, maybe_tag = (rest if sep else name).rpartition("@")
    if at and maybe_tag and "/" not in maybe_tag and "\\" not in maybe_tag:
        tag = maybe_tag
        if sep:
            argument = base
        else:
            name = base
    name = name.strip()
    if not name:
        raise AbductError(f"spec '{text}' has no name; expected name[:argument][@tag][,key=value...]")
    if sep and not (argument and argument.strip()):
        raise AbductError(f"spec '{text}' has an empty argument after ':'")
    options = tuple(_parse_option(pair, text) for pair in pairs)
    return name, None if argument is None else _unquote(argument), tag, options


def _format_spec(name: str, argument: str | None, tag: str | None, options: tuple[tuple[str, str], ...]) -> str:
    """The text ``_parse_spec`` reads back: a value holding a comma, or empty, is quoted."""
    out = name
    if argument is not None:
        out += f":{argument}"
    if tag is not None:
        out += f"@{tag}"
    for key, value in options:
        shown = f'"{value}"' if "," in value or not value else value
        out += f",{key}={shown}"
    return out


def _option_dict(options: tuple[tuple[str, str], ...], source: str) -> dict[str, str]:
    """The options by key; a key given twice is an error."""
    found: dict[str, str] = {}
    for key, value in options:
        if key in found:
            raise AbductError(f"option '{key}' is given twice in '{source}'")
        found[key] = value
    return found
