"""Entry module: adds ``abduct demo`` to the command line. Nothing heavy is imported here; the
command lives in ``abduct_demo.cli``."""

from __future__ import annotations

import click

from abduct import hookimpl


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct_demo.cli import demo_cmd

    cli.add_command(demo_cmd)
