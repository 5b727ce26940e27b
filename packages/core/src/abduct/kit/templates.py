"""Prompt templates with named placeholders (``{candidate}``, ``{context}``, ...), checked
before any model call: a placeholder the caller does not fill is a one-line error naming it
and the ones that exist, never a ``KeyError`` in the middle of a run."""

from __future__ import annotations

import string
from collections.abc import Iterable

from abduct.contract.errors import AbductError


def placeholders(template: str, where: str = "prompt template") -> list[str]:
    """The placeholder names of ``template`` in order of appearance (``{{`` is a literal brace)."""
    try:
        fields = [name for _, name, spec, conv in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise AbductError(f"{where} '{template}' is malformed ({exc}); write a literal brace as {{{{ or }}}}") from None
    for name in fields:
        if not name.isidentifier():
            raise AbductError(f"{where} has the placeholder '{{{name}}}'; placeholders are plain names like {{text}}")
    return fields


def check_template(template: str, allowed: Iterable[str], where: str = "prompt template",
                   required: Iterable[str] = ()) -> list[str]:
    """``template``'s placeholders, all in ``allowed`` and including each of ``required``."""
    allowed = sorted(set(allowed))
    names = placeholders(template, where)
    for name in names:
        if name not in allowed:
            raise AbductError(f"{where} has an unknown placeholder '{{{name}}}' "
                              f"(known: {', '.join('{' + a + '}' for a in allowed)})")
    for name in required:
        if name not in names:
            raise AbductError(f"{where} needs the placeholder '{{{name}}}'")
    return names
