"""The text grammar of specs, ``name[:argument][@tag][,key=value...]``: what ``abduct.Spec``
reads (documented there). Below the contract, so the contract shows a spec's fields, not its parser."""

from __future__ import annotations

import re


class SpecSyntaxError(ValueError):
    """Text that is not a spec; ``abduct.Spec`` reports it as an ``AbductError``."""


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
        raise SpecSyntaxError(f"unclosed {quote} in '{text}'")
    parts.append(text[start:])
    return parts


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] == text[0]:
        return text[1:-1]
    return text


def parse_option(pair: str, source: str) -> tuple[str, str]:
    """``key=value`` -> (key with ``-`` as ``_``, unquoted value)."""
    key, sep, value = pair.partition("=")
    key = key.strip()
    if not sep or not _KEY.match(key):
        raise SpecSyntaxError(f"'{pair}' in '{source}' is not key=value")
    return key.replace("-", "_"), _unquote(value)


def parse_spec(text: str) -> tuple[str, str | None, str | None, tuple[tuple[str, str], ...]]:
    """``(name, argument, tag, options)`` of a spec's text; a trailing ``@tag`` counts only if
    it holds no path separator, so ``clip:/data/run@3/ckpt.pt`` keeps its ``@``."""
    text = text.strip()
    if not text:
        raise SpecSyntaxError("empty spec; expected name[:argument][@tag][,key=value...]")
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
        raise SpecSyntaxError(f"spec '{text}' has no name; expected name[:argument][@tag][,key=value...]")
    if sep and not (argument and argument.strip()):
        raise SpecSyntaxError(f"spec '{text}' has an empty argument after ':'")
    options = tuple(parse_option(pair, text) for pair in pairs)
    return name, None if argument is None else _unquote(argument), tag, options


def format_spec(name: str, argument: str | None, tag: str | None, options: tuple[tuple[str, str], ...]) -> str:
    """The text ``parse_spec`` reads back: a value holding a comma, or empty, is quoted."""
    out = name
    if argument is not None:
        out += f":{argument}"
    if tag is not None:
        out += f"@{tag}"
    for key, value in options:
        shown = f'"{value}"' if "," in value or not value else value
        out += f",{key}={shown}"
    return out


def option_dict(options: tuple[tuple[str, str], ...], source: str) -> dict[str, str]:
    """The options by key; a key given twice is an error."""
    found: dict[str, str] = {}
    for key, value in options:
        if key in found:
            raise SpecSyntaxError(f"option '{key}' is given twice in '{source}'")
        found[key] = value
    return found
