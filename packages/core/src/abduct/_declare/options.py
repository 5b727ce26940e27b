"""A factory's options, read off its own signature and bound from the text a user gives.

A factory is ``factory(spec, settings, *, key: type = default, ...)``: its keyword-only
parameters are its options (``abduct.contract.options`` is how an author declares them). Text
values from a spec (``,num_beams=4``) or ``-o`` are converted to the annotated type (``int``,
``float``, ``bool``, ``str``, ``Path``, ``Literal[...]`` choices, and ``X | None``), then checked
against the limits the annotation declares; unknown keys are refused with the valid ones,
unless the factory also has ``**kwargs``: then they reach it as text (a wrapped harness's own
model arguments).
"""

from __future__ import annotations

import difflib
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abduct.contract.errors import AbductError
from abduct.contract.options import check_value, constraints_of

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}
_NONE = {"none", "null"}


@dataclass(frozen=True)
class Option:
    """One keyword-only parameter of a factory: its name, annotation and default."""

    name: str
    annotation: Any
    default: Any

    @property
    def value_type(self) -> Any:
        """The annotation without its constraints (``float`` of ``Annotated[float, Range(gt=0)]``)."""
        return constraints_of(self.annotation)[0]

    @property
    def constraints(self) -> tuple[Any, ...]:
        """What the annotation declares beyond the type (``Range``, ``NonFinite``)."""
        return constraints_of(self.annotation)[1]

    def describe(self) -> str:
        return f"{self.name}={self.default!r}" if self.default is not inspect.Parameter.empty else self.name


def options_of(factory: Callable[..., Any]) -> dict[str, Option]:
    """The keyword-only parameters of ``factory`` (of ``__init__`` for a class)."""
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception:  # unresolvable annotations: options stay text
        hints = {}
    return {param.name: Option(param.name, hints.get(param.name, Any), param.default)
            for param in inspect.signature(target).parameters.values() if param.kind is inspect.Parameter.KEYWORD_ONLY}


def _shown(value: str) -> str:
    """A value as an error shows it: quoted, escaped (a newline stays on the line), cut short."""
    return repr(value if len(value) <= 40 else value[:40] + "...")


def _convert(value: Any, annotation: Any, where: str) -> Any:
    annotation, _ = constraints_of(annotation)
    if not isinstance(value, str) or annotation in (Any, str):
        return value
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if type(None) in args and value.strip().lower() in _NONE:
            return None
        inner = [a for a in args if a is not type(None)]
        errors = []
        for candidate in inner:
            try:
                return _convert(value, candidate, where)
            except AbductError as exc:
                errors.append(exc)
        raise errors[0]
    if origin is typing.Literal:
        if value in args:
            return value
        raise AbductError(f"{where}: {_shown(value)} is not one of {', '.join(map(str, args))}")
    if annotation is bool:
        lowered = value.strip().lower()
        if lowered in _TRUE | _FALSE:
            return lowered in _TRUE
        raise AbductError(f"{where}: {_shown(value)} is not a boolean (true/false)")
    if annotation in (int, float):
        try:
            return annotation(value)
        except ValueError:
            raise AbductError(f"{where}: {_shown(value)} is not {'an integer' if annotation is int else 'a number'}") from None
    if annotation is Path:
        return Path(value)
    return value


def _takes_any_keyword(factory: Callable[..., Any]) -> bool:
    """True when ``factory`` has a ``**kwargs`` parameter: it takes options it does not list."""
    target = factory.__init__ if inspect.isclass(factory) else factory
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(target).parameters.values())


def bind_options(kind: str, name: str, factory: Callable[..., Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` checked against and typed by ``factory``'s options; one-line errors."""
    accepted = options_of(factory)
    passthrough = _takes_any_keyword(factory)
    bound = {}
    for key, value in given.items():
        if key not in accepted and passthrough:  # e.g. a wrapped harness's own model arguments, as text
            bound[key] = value
            continue
        if key not in accepted:
            close = difflib.get_close_matches(key, list(accepted), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            valid = ", ".join(o.describe() for o in accepted.values()) or "none"
            raise AbductError(f"{kind} '{name}' has no option '{key}'{hint} (valid: {valid})")
        where = f"{kind} '{name}' option '{key}'"
        bound[key] = _convert(value, accepted[key].annotation, where)
        check_value(bound[key], accepted[key].annotation, where)
    return bound
