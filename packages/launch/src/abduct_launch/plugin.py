"""Entry module: adds ``abduct launch`` to the command line; the command lives in ``abduct_launch.cli``."""

from __future__ import annotations

import click

from abduct import hookimpl


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct_launch.cli import launch_group

    cli.add_command(launch_group)
