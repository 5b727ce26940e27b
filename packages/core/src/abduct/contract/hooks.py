# mypy: disable-error-code="empty-body"
"""The hooks plugins implement, and the record each ``register_*`` hook returns (or yields)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click

PROJECT = "abduct"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

PLUGIN_API = 1
"""The plugin API this core implements, an integer apart from the distribution's version: it
changes when a plugin written for the previous one would need changing (a hook or a protocol
changed incompatibly); a hook or protocol that only gains what a plugin may leave out keeps it."""
SUPPORTED_PLUGIN_APIS = (1,)
"""The plugin APIs a plugin may be written for; one written for another is listed by ``abduct
plugins`` with the reason and not loaded. A distribution declares its plugins' API in the entry
points of the group ``abduct.api``: one entry a plugin, the plugin's entry name and an object
reference that names the version (``mine = "abduct.api:v1"``, a value every build backend accepts),
read from the text without importing anything."""


@dataclass(frozen=True)
class Registration:
    """A named component: ``factory`` is ``"module:attr"``, imported on first use.

    Every factory has one shape, whatever the kind: ``factory(spec, settings, **options)``,
    where ``spec`` is the parsed ``abduct.Spec``, ``settings`` the run's
    ``abduct.Settings`` and the options its keyword-only parameters (see ``abduct.contract.options``).
    A factory that builds other components (a cascade's two models) takes a third positional
    parameter, ``registry``: the registry building it, whose components it uses.
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


@dataclass(frozen=True)
class PublishedRow:
    """One row of a paper's results table: what ``abduct compare`` and ``abduct published`` show
    beside runs. ``source`` says where in the paper (a table or section); ``metrics`` use the
    task's metric names (a column with no abduct metric keeps the paper's name); ``setting`` says
    how the row was obtained (zero-shot, fine-tuned, oracle, human...) and ``std`` gives the
    standard deviation over seeds where the paper does; ``conditions`` what a run must share to
    be compared with it (``data``: real or synthetic, ``candidates``: the set a rank is taken in)."""

    task: str
    model: str
    split: str | None
    metrics: Mapping[str, float]
    citation: str
    source: str
    setting: str | None = None
    std: Mapping[str, float] = field(default_factory=dict)
    conditions: Mapping[str, str | float] = field(default_factory=dict)


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


@hookspec(historic=True)
def add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Declare hooks of the plugin's own (``pluginmanager.add_hookspecs(module)``), as pytest's
    ``pytest_addhooks``: abduct-demo declares ``register_demos`` so. Called as the plugin is
    registered. A plugin implementing a hook that another distribution declares marks it
    ``@hookimpl(optionalhook=True)``, so that it loads where that distribution is not installed."""


@hookspec
def register_published() -> Iterable[PublishedRow]:
    """Rows of the papers' results tables for this plugin's tasks (see ``abduct.kit.read_published``)."""


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add click commands or groups to the ``abduct`` CLI."""


@dataclass(frozen=True)
class RunPages:
    """What ``render_run_pages`` returns: ``files`` by name (text or bytes) and ``folders`` (name
    -> a folder staged inside the run folder). The core writes them, the folders first, so a
    page never points at what is not there yet, and nothing at all when any renderer fails."""

    files: Mapping[str, str | bytes]
    folders: Mapping[str, Path] = field(default_factory=dict)


@hookspec
def render_run_pages(results: Mapping[str, Any], predictions: Sequence[Mapping[str, Any]], out_dir: Path,
                     sample_view: Callable[[Mapping[str, Any]], Mapping[str, Any] | None] | None,
                     cache_dir: Path | None) -> RunPages | None:
    """Human-readable pages of a finished run (abduct-report's report.md, report.html and
    samples.html), rendered from what results.json and predictions.jsonl hold; ``sample_view``
    is the task's view of one record, ``cache_dir`` where thumbnails may be kept across runs."""
