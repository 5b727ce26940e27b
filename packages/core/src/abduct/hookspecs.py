# mypy: disable-error-code="empty-body"
"""Hook specifications. Each ``register_*`` hook returns (or yields) Registration records."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pluggy

from abduct.registration import Registration

if TYPE_CHECKING:
    import click

PROJECT = "abduct"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_datasets() -> Iterable[Registration]:
    """Datasets this plugin reads."""


@hookspec
def register_tasks() -> Iterable[Registration]:
    """Evaluation tasks this plugin provides."""


@hookspec
def register_models() -> Iterable[Registration]:
    """Models this plugin provides: each may score, generate, or both."""


@hookspec
def register_metrics() -> Iterable[Registration]:
    """Metrics this plugin provides."""


@hookspec
def register_demos() -> Iterable[Registration]:
    """Sections of ``abduct demo``: each factory is ``section(ctx: DemoContext) -> DemoTable``
    (see ``abduct.demo``), not the ``(spec, settings, **options)`` shape of other kinds."""


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add click commands or groups to the ``abduct`` CLI."""
