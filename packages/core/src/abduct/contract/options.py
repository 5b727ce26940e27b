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

from typing import Any

from abduct._constraints import ConstraintError, NonFinite, Range, constraints_of
from abduct._constraints import check_fields as _check_fields
from abduct.contract.errors import AbductError

__all__ = ["NonFinite", "Range", "check_fields", "constraints_of"]


def check_fields(instance: Any, owner: str) -> None:
    """Check a dataclass's fields against their declared constraints (for direct construction)."""
    try:
        _check_fields(instance, owner)
    except ConstraintError as exc:
        raise AbductError(str(exc)) from None
