# mypy: disable-error-code="empty-body"
"""Hook specifications. Each ``register_*`` hook returns (or yields) Registration records."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import click

    from abduct.plugins import Registration

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
def register_scorers() -> Iterable[Registration]:
    """Plausibility scorers (models) this plugin provides."""


@hookspec
def register_generators() -> Iterable[Registration]:
    """Text generators (models) this plugin provides."""


@hookspec
def register_metrics() -> Iterable[Registration]:
    """Metrics this plugin provides."""


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add click commands or groups to the ``abduct`` CLI."""
