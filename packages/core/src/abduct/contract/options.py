"""Declaring a component's options and their limits.

A factory is ``factory(spec, settings, *, key: type = default, ...)``: its keyword-only
parameters are its options, typed by their annotations (``int``, ``float``, ``bool``, ``str``,
``Path``, ``Literal[...]`` choices, and ``X | None``). The host converts the text a user gives
(``,num_beams=4`` or ``-o``) to those types and refuses unknown keys; a factory that also has
``**kwargs`` gets the keys it does not list as text (``abduct.host.bind_options``).

Values are checked where the option is declared: ``Annotated[int, Range(ge=1)]``,
``Annotated[float, Range(gt=0, le=1)]``. Every float option is finite unless it is declared
``Annotated[float, NonFinite()]``: NaN and inf are one-line errors, not silent scores. A
dataclass checks its own fields the same way with ``check_fields`` (as ``Decoding`` does).
"""

from __future__ import annotations

import math
import types
import typing
from dataclasses import dataclass
from typing import Any

from abduct.contract.errors import AbductError

__all__ = ["NonFinite", "Range", "check_fields"]


@dataclass(frozen=True)
class Range:
    """Bounds on a number option (any of them may be left out)."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    def describe(self) -> str:
        parts = [f"{op} {bound:g}" for op, bound in ((">=", self.ge), (">", self.gt), ("<=", self.le), ("<", self.lt))
                 if bound is not None]
        return " and ".join(parts)

    def admits(self, value: float) -> bool:
        return ((self.ge is None or value >= self.ge) and (self.gt is None or value > self.gt)
                and (self.le is None or value <= self.le) and (self.lt is None or value < self.lt))

    def outside(self) -> list[float]:
        """Values just outside the bounds: what the generated tests try."""
        return [b - 1 for b in (self.ge, self.gt) if b is not None] + [b + 1 for b in (self.le, self.lt) if b is not None]


@dataclass(frozen=True)
class NonFinite:
    """Marks a float option that may be NaN or infinite (off by default)."""


def constraints_of(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    """``(type, constraints)`` of an option's annotation; ``Annotated`` metadata are the constraints."""
    if typing.get_origin(annotation) is typing.Annotated:
        inner, *extras = typing.get_args(annotation)
        return inner, tuple(extras)
    return annotation, ()


def is_float(annotation: Any) -> bool:
    """``float`` or a union holding it (``float | None``)."""
    if annotation is float:
        return True
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and float in typing.get_args(annotation)


def check_value(value: Any, annotation: Any, where: str) -> None:
    """Refuse ``value`` when it breaks the constraints ``annotation`` declares (one line)."""
    inner, extras = constraints_of(annotation)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if isinstance(value, float) and not math.isfinite(value) and is_float(inner) \
            and not any(isinstance(e, NonFinite) for e in extras):
        raise AbductError(f"{where}: {value} is not a finite number")
    for extra in extras:
        if isinstance(extra, Range) and not (isinstance(value, float) and math.isnan(value)) and not extra.admits(value):
            raise AbductError(f"{where}: {value:g} is out of range (must be {extra.describe()})")


def check_fields(instance: Any, owner: str) -> None:
    """Check a dataclass's fields against their declared constraints (for direct construction)."""
    hints = typing.get_type_hints(type(instance), include_extras=True)
    for name, annotation in hints.items():
        check_value(getattr(instance, name), annotation, f"{owner} '{name}'")
