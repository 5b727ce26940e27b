"""The table of first-party providers (``abduct._registry.providers``) matches what the
packages register: with every package installed, each listed name is registered by that very
distribution, and every task, model, dataset, metric and command a first-party package adds is
listed, so a user missing one is told which package to install."""

from __future__ import annotations

import importlib.metadata as md

from abduct._cli import build_cli, cli
from abduct._registry.providers import PROVIDERS
from abduct.host import get_registry

KINDS = ("task", "model", "dataset", "metric")
NOT_PROVIDED = {"core", "abduct-core", "abduct-plugin-example", "abduct-tutorial"}  # core: always there


def _distribution_of_plugin() -> dict[str, str]:
    return {ep.name: ep.dist.name for ep in md.entry_points(group="abduct") if ep.dist is not None}


def test_every_first_party_component_names_its_package() -> None:
    registry, dist_of = get_registry(), _distribution_of_plugin()
    registered = {(kind, c.name): dist_of.get(c.plugin, c.plugin) for kind in KINDS for c in registry.components(kind)}
    first_party = {key: dist for key, dist in registered.items() if dist not in NOT_PROVIDED}
    listed = {key: dist for key, dist in PROVIDERS.items() if key[0] != "command"}
    assert listed == first_party


def test_every_first_party_command_names_its_package() -> None:
    group = build_cli()
    commands = {name for kind, name in PROVIDERS if kind == "command"}
    assert commands <= set(group.commands)
    plugin_commands = {name for name in group.commands if name not in cli.commands and not name.startswith("example")}
    assert plugin_commands == commands
