# mypy: disable-error-code="empty-body"
"""The hook abduct-demo declares (through the core's ``add_hookspecs``): ``register_demos``.

A plugin with a section of ``abduct demo`` implements it marked ``@hookimpl(optionalhook=True)``,
so that the plugin loads where abduct-demo is not installed (its sections are then never run)."""

from __future__ import annotations

from collections.abc import Iterable

import pluggy

from abduct import Registration

hookspec = pluggy.HookspecMarker("abduct")


@hookspec
def register_demos() -> Iterable[Registration]:
    """Sections of ``abduct demo``: each factory is ``section(ctx: DemoContext) -> DemoTable``
    (see ``abduct_demo``), not the ``(spec, settings, **options)`` shape of other kinds."""
