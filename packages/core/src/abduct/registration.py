"""The record a plugin hook yields for each component it provides."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Registration:
    """A named component: ``factory`` is ``"module:attr"``, imported on first use.

    Every factory has one shape, whatever the kind: ``factory(spec, settings, **options)``,
    where ``spec`` is the parsed ``abduct.spec.Spec``, ``settings`` the run's
    ``abduct.spec.Settings`` and the options its keyword-only parameters (see ``abduct.options``).
    """

    name: str
    description: str
    factory: str

    def load(self) -> Callable[..., Any]:
        module_name, _, attr = self.factory.partition(":")
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj  # type: ignore[no-any-return]
