"""abduct plugin: registrations only (``abduct video probe`` and ``abduct video frames``, whose
bodies live in :mod:`abduct_video.cli`). No decord or PyAV import here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from abduct import hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct.kit import subgroup
    from abduct_video.cli import frames, probe

    group = subgroup(cli, "video", "Look at videos as abduct's frame sampler reads them.")
    group.add_command(probe)
    group.add_command(frames)
