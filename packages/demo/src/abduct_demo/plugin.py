"""Entry module: declares the hook ``register_demos`` (``abduct_demo.hooks``) and adds ``abduct
demo`` to the command line. Nothing heavy is imported here; the command lives in ``abduct_demo.cli``."""

from __future__ import annotations

import click
import pluggy

from abduct import hookimpl
from abduct_demo import hooks


@hookimpl
def add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct_demo.cli import demo_cmd

    cli.add_command(demo_cmd)
