"""Plugin discovery and the registry of named components.

The plugin manager is built by a function (never at import time). Entry points in the
``abduct`` group are loaded one by one: a plugin that fails to import (``SystemExit``
included), takes longer than ``ABDUCT_PLUGIN_IMPORT_TIMEOUT`` to import, or whose hooks raise
or return malformed records, is reported and skipped; what it prints goes to stderr. Registrations are lazy: a record
holds ``"module:attr"``, imported only when the component is used, so listing never
imports torch.

Each entry point's plugin API (``abduct.contract.hooks.PLUGIN_API``) is read from the ``abduct.api``
entry points of its distribution before anything is imported: a plugin written for an API this
core does not support is listed with the reason and not loaded; one that declares none loads.
A declaration is an object reference, ``mine = "abduct.api:v1"``, because setuptools accepts
nothing else as an entry point's value; the version is read from the text, never imported.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import inspect
import os
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pluggy
from pluggy import HookImpl

from abduct._declare.options import bind_options
from abduct._declare.traits import model_traits, task_traits
from abduct._registry.contain import (
    ImportTimedOut,
    import_timeout,
    load_in_time,
    plugin_call,
    stdout_to_stderr,
)
from abduct._registry.contain import describe as _describe
from abduct._registry.providers import UnknownNameError, provider
from abduct.contract import hooks as hookspecs
from abduct.contract.errors import AbductError, PluginError
from abduct.contract.hooks import (
    PLUGIN_API,
    SUPPORTED_PLUGIN_APIS,
    PublishedRow,
    Registration,
    RunPages,
)
from abduct.contract.protocols import Dataset, Metric
from abduct.contract.spec import Settings, Spec
from abduct.contract.task import Task
from abduct.kit.install import install_command

KINDS = ("dataset", "task", "model", "metric", "demo")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
CORE_PLUGIN = "core"
BUILTINS_MODULE = "abduct._builtins.plugin"


API_GROUP = "abduct.api"  # the entry-point group where a distribution declares its plugins' API
# a declaration's value: a valid ``module:attr`` for every build backend, the plugin API in its name
API_REFERENCE = re.compile(r"abduct\.api:v(?P<api>[0-9]{1,4})")


def api_reference(api: int) -> str:
    """The value that declares plugin API ``api`` in the ``abduct.api`` group: ``abduct.api:v1``."""
    return f"abduct.api:v{api}"


@dataclass(frozen=True)
class Component:
    """A registration together with its kind and the plugin that provided it."""

    kind: str
    plugin: str
    registration: Registration

    @property
    def name(self) -> str:
        return self.registration.name

    @property
    def description(self) -> str:
        return self.registration.description


@dataclass
class PluginInfo:
    """One installed plugin as ``abduct plugins`` shows it."""

    name: str
    distribution: str | None
    version: str | None
    registers: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None
    published_error: str | None = None  # its published rows are malformed: left out, the plugin still works
    api: int | None = None  # the plugin API its distribution declares (abduct.api), None when none or unreadable
    note: str | None = None  # not an error: it declares no plugin API
    refused: bool = False  # not loaded: written for a plugin API this core does not support (``error`` says which)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "api": self.api,
            "registers": self.registers,
            "error": self.error,
            "note": self.note,
            **({"published_error": self.published_error} if self.published_error else {}),
        }

    @property
    def label(self) -> str:
        """``plugin 'name' (distribution version)``, as a one-line error names it."""
        where = " ".join(part for part in (self.distribution, self.version) if part)
        return f"plugin '{self.name}'" + (f" ({where})" if where else "")


# What a plugin's hook or import may raise and be reported for: anything but Ctrl-C (SystemExit
# included, which would otherwise end every command).
_FAULTS = (Exception, SystemExit, GeneratorExit)


class Registry:
    """All plugins and what they register, with lookups that suggest close names."""

    def __init__(self, manager: pluggy.PluginManager, plugins: list[PluginInfo]) -> None:
        self.manager = manager
        self.plugins = plugins
        self._components: dict[str, dict[str, Component]] = {kind: {} for kind in KINDS}
        self._conflicts: dict[tuple[str, str], list[str]] = {}
        self._collect()

    def _healthy(self, hook_name: str) -> Iterator[tuple[HookImpl, PluginInfo]]:
        """Each implementation of ``hook_name`` whose plugin has no error, with that plugin's info,
        in the order the plugins were registered (pluggy's list; it calls them the other way round);
        the error is checked as each one is reached, so a plugin that fails is skipped from then on."""
        by_name = {info.name: info for info in self.plugins}
        caller = getattr(self.manager.hook, hook_name, None)  # None: a plugin's own hook, not declared here
        for impl in caller.get_hookimpls() if caller is not None else ():
            info = by_name[impl.plugin_name]
            if info.error is None:
                yield impl, info

    def _collect(self) -> None:
        found: dict[str, list[Component]] = {info.name: [] for info in self.plugins}
        for kind in KINDS:
            for impl, info in self._healthy(f"register_{kind}s"):
                try:
                    with stdout_to_stderr():  # what a hook prints is not the command's output
                        records: Any = impl.function() or ()  # whatever the plugin returns: _validate checks each
                        for record in records:
                            found[info.name].append(Component(kind, info.name, _validate(record, info.name, kind)))
                except _FAULTS as exc:  # a broken plugin is reported, never fatal
                    info.error = _describe(exc)
        # Plugins in discovery order, so the first one installed keeps a contested name.
        for info in self.plugins:
            if info.error is None:
                for comp in found[info.name]:
                    self._add(comp, info)

    def call_each(self, hook_name: str, **kwargs: Any) -> None:
        """Call a hook on every healthy plugin; one that raises is reported, not fatal. Each
        implementation gets only the arguments it declares, as pluggy's own calls do, so a hook
        can gain an argument without breaking the plugins written before it."""
        for impl, info in self._healthy(hook_name):
            try:
                with stdout_to_stderr():
                    impl.function(**{name: kwargs[name] for name in impl.argnames})
            except _FAULTS as exc:
                info.error = _describe(exc)

    def run_pages(self, **kwargs: Any) -> list[RunPages]:
        """Every healthy plugin's pages of a finished run (hook ``render_run_pages``). Unlike the
        other hooks, a renderer that raises fails the run's writing: a run folder is whole or untouched."""
        found: list[RunPages] = []
        for impl, _ in self._healthy("render_run_pages"):
            pages = impl.function(**{name: kwargs[name] for name in impl.argnames})
            if pages is None:
                continue
            if not isinstance(pages, RunPages):
                raise PluginError(f"plugin '{impl.plugin_name}' returned {type(pages).__name__} from "
                                  "render_run_pages, expected abduct.contract.RunPages")
            found.append(pages)
        return found

    def published(self) -> list[PublishedRow]:
        """Every healthy plugin's published rows (hook ``register_published``), in plugin
        order; a plugin whose rows are malformed is reported (``abduct plugins``) and its
        rows left out; its components and commands keep working."""
        rows: list[PublishedRow] = []
        for impl, info in self._healthy("register_published"):
            try:
                with stdout_to_stderr():
                    returned: Any = impl.function() or ()
                    found = list(returned)
                wrong = [type(r).__name__ for r in found if not isinstance(r, PublishedRow)]
                if wrong:
                    raise PluginError(f"returned {wrong[0]} from register_published, expected abduct.PublishedRow")
            except _FAULTS as exc:
                info.published_error = _describe(exc)
                continue
            rows.extend(found)
        return rows

    def _add(self, comp: Component, info: PluginInfo) -> None:
        table = self._components[comp.kind]
        if comp.name in table:
            first = table[comp.name].plugin
            self._conflicts.setdefault((comp.kind, comp.name), [first]).append(comp.plugin)
            info.error = (
                f"{comp.kind} '{comp.name}' is also registered by plugin '{first}'; "
                f"the name is refused until one of the two is removed or disabled"
            )
            return
        table[comp.name] = comp
        info.registers.setdefault(comp.kind, []).append(comp.name)

    def components(self, kind: str) -> list[Component]:
        return sorted(self._components[kind].values(), key=lambda c: c.name)

    def get(self, kind: str, name: str) -> Component:
        """The component ``name`` of ``kind``; UnknownNameError or PluginError otherwise."""
        if (kind, name) in self._conflicts:
            owners = " and ".join(f"'{p}'" for p in self._conflicts[(kind, name)])
            raise PluginError(
                f"{kind} '{name}' is registered by plugins {owners}; "
                "uninstall one or set ABDUCT_DISABLE_PLUGINS"
            )
        table = self._components[kind]
        if name not in table:
            package = provider(kind, name)
            refused = self.refused(package)
            if package is not None and refused:  # installed, but written for another plugin API
                raise PluginError(f"{kind} '{name}' comes with {package}, which is not loaded: {refused[0].error}")
            unknown = UnknownNameError(kind, name, table, package,
                                       install_command(package) if package is not None else None)
            if refused:  # it may come with a plugin that was not loaded: say which, and why
                more = f" (and {len(refused) - 1} more plugins: see `abduct plugins`)" if len(refused) > 1 else ""
                joint = " Not loaded: " if str(unknown).endswith("?") else "; not loaded: "
                unknown.args = (f"{unknown}{joint}{refused[0].error}{more}",)
            raise unknown
        return table[name]

    def refused(self, distribution: str | None = None) -> list[PluginInfo]:
        """The plugins not loaded because they are written for a plugin API this core does not
        support (each one's ``error`` says which), all of them or ``distribution``'s."""
        return [info for info in self.plugins if info.refused
                and (distribution is None or _normal(info.distribution) == _normal(distribution))]

    def create(self, kind: str, spec: Spec | str, settings: Settings | None = None, **options: Any) -> Any:
        """Build the component a spec names: ``factory(spec, settings, **options)``, with the
        spec's own options and ``options`` (typed values, e.g. from a task) together."""
        spec = Spec.parse(spec) if isinstance(spec, str) else spec
        comp = self.get(kind, spec.name)
        try:
            with stdout_to_stderr():  # the component's module is imported here, the first time it is used
                factory = comp.registration.load()
        except _FAULTS as exc:
            raise PluginError(
                f"{kind} '{spec.name}' from plugin '{comp.plugin}' failed to load: {_describe(exc)}"
            ) from exc
        given: dict[str, Any] = {**spec.option_dict(), **options}
        bound = bind_options(kind, spec.name, factory, given)
        tracked = _ReadSpec.of(spec)
        with_registry = (self,) if _takes_registry(factory) else ()
        built = plugin_call(f"{kind} '{spec.name}' from plugin '{comp.plugin}'", "its factory",
                            lambda: factory(tracked, settings or Settings(), *with_registry, **bound))
        ignored = [part for part in ("argument", "tag") if getattr(spec, part) is not None and part not in tracked.read]
        if ignored:  # the factory never looked at it: refuse rather than silently ignore it
            shown = " and ".join(f"the {p} '{':' if p == 'argument' else '@'}{getattr(spec, p)}'" for p in ignored)
            raise AbductError(f"{kind} '{spec.name}' does not use {shown}; remove it (spec: {spec})")
        _check_declarations(kind, spec.name, built)
        return built


def _takes_registry(factory: Any) -> bool:
    """A factory ``(spec, settings, registry, *, options)`` builds what it holds (a cascade's two
    models) from the registry that builds it, not from the process-wide one."""
    target = factory.__init__ if inspect.isclass(factory) else factory
    positional = [p for p in inspect.signature(target).parameters.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    return len(positional) - inspect.isclass(factory) >= 3


class _ReadSpec(Spec):
    """A spec that notes which of ``argument`` and ``tag`` its reader looked at: how the
    registry tells, for any factory, a part it ignores from one it uses."""

    read: set[str]

    @classmethod
    def of(cls, spec: Spec) -> _ReadSpec:
        tracked = cls(spec.name, spec.argument, spec.tag, spec.options)
        object.__setattr__(tracked, "read", set())
        return tracked

    def __getattribute__(self, name: str) -> Any:
        if name in ("argument", "tag"):
            object.__getattribute__(self, "read").add(name)
        return object.__getattribute__(self, name)


def _check_declarations(kind: str, name: str, built: object) -> None:
    """What a component declares, checked when it is built (its registration is lazy, so this is
    the first moment it exists): a malformed declaration is one line naming it."""
    if kind == "model":
        if not model_traits(built, name).abilities:
            raise PluginError(f"model '{name}' neither scores nor generates (see abduct.contract.protocols)")
    elif kind == "task":
        if not isinstance(built, Task):
            raise PluginError(f"task '{name}' does not implement the Task protocol (dataset, plan, finish)")
        task_traits(built, name)
    elif kind == "metric" and not isinstance(built, Metric):
        raise PluginError(f"metric '{name}' does not implement the Metric protocol (compute)")
    elif kind == "dataset" and not isinstance(built, Dataset):
        raise PluginError(f"dataset '{name}' does not implement the Dataset protocol (load, check)")


def _validate(record: object, plugin: str, kind: str) -> Registration:
    if not isinstance(record, Registration):
        raise PluginError(
            f"plugin '{plugin}' returned {type(record).__name__} from register_{kind}s, "
            "expected abduct.Registration"
        )
    if not _NAME.match(record.name):
        raise PluginError(f"plugin '{plugin}': {kind} name '{record.name}' is not a lowercase kebab name")
    if not _FACTORY.match(record.factory):
        raise PluginError(
            f"plugin '{plugin}': {kind} '{record.name}' factory '{record.factory}' is not 'module:attr'"
        )
    return record


def _normal(name: str | None) -> str | None:
    """A distribution name as pip compares them (``abduct_Foo`` is ``abduct-foo``)."""
    return None if name is None else re.sub(r"[-_.]+", "-", name).lower()


def _declared_apis() -> dict[tuple[str, str | None], str]:
    """What the ``abduct.api`` entry points declare: (entry name, distribution) -> the plugin API
    as text. Read from the installed metadata; nothing is imported."""
    found: dict[tuple[str, str | None], str] = {}
    for ep in md.entry_points(group=API_GROUP):
        found.setdefault((ep.name, _normal(ep.dist.name if ep.dist is not None else None)), ep.value)
    return found


def _supported() -> str:
    low, high = SUPPORTED_PLUGIN_APIS[0], SUPPORTED_PLUGIN_APIS[-1]
    return f"plugin API {low}–{high}" if high > low else f"plugin API {low}"


def _check_api(info: PluginInfo, declared: str | None, core: str) -> None:
    """Read what ``info``'s distribution declares into ``info.api`` and ``info.note``; a plugin
    written for a plugin API this core does not support is refused: ``info.refused``, and
    ``info.error`` one line naming the plugin, its distribution and the versions."""
    if declared is None:
        info.note = f"declares no plugin API version (entry point group {API_GROUP}); loaded unchecked"
        return
    package = info.distribution or "the plugin"
    match = API_REFERENCE.fullmatch(declared.strip())
    if match is None:
        info.refused = True
        info.error = (f"{info.label} declares plugin API '{declared}' ({API_GROUP}), which is not of the form "
                      f"'{api_reference(PLUGIN_API)}'; this {core} supports {_supported()}: upgrade {package} "
                      "or ask its authors to fix it")
        return
    info.api = api = int(match["api"])
    if api < SUPPORTED_PLUGIN_APIS[0]:
        info.refused = True
        info.error = (f"{info.label} is written for plugin API {api}; this {core} supports {_supported()}: "
                      f"upgrade {package} or install an abduct-core that supports plugin API {api}")
    elif api > SUPPORTED_PLUGIN_APIS[-1]:
        info.refused = True
        info.error = (f"{info.label} is written for plugin API {api}; this {core} supports {_supported()}: "
                      f"upgrade abduct-core or install a release of {package} written for plugin API {SUPPORTED_PLUGIN_APIS[-1]}")


def build_registry(extra_plugins: Iterable[tuple[str, object]] = ()) -> Registry:
    """Discover plugins (built-ins, entry points, ``extra_plugins``) and build the registry."""
    # The core's own plugin sits in a layer above the registry: found by name, like any plugin.
    builtins = importlib.import_module(BUILTINS_MODULE)

    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    # a plugin's own hooks (add_hookspecs), declared as it registers, for the plugins registered after it
    manager.hook.add_hookspecs.call_historic(kwargs={"pluginmanager": manager})
    disabled = {part.strip() for part in os.environ.get("ABDUCT_DISABLE_PLUGINS", "").split(",") if part.strip()}
    infos: list[PluginInfo] = []

    try:
        core_version: str | None = md.version("abduct-core")
    except md.PackageNotFoundError:
        core_version = None
    manager.register(builtins, name=CORE_PLUGIN)
    infos.append(PluginInfo(CORE_PLUGIN, "abduct-core", core_version, api=PLUGIN_API))
    core = f"abduct-core {core_version}" if core_version else "abduct-core"
    declared = _declared_apis()

    seen = {CORE_PLUGIN}
    timeout = import_timeout()
    for ep in sorted(md.entry_points(group=hookspecs.PROJECT), key=lambda e: e.name):
        if ep.name in disabled:
            continue
        dist = ep.dist.name if ep.dist is not None else None
        version = ep.dist.version if ep.dist is not None else None
        if ep.name in seen:  # two distributions claim one plugin name: keep the first
            infos.append(PluginInfo(ep.name + f" ({dist})", dist, version,
                                    error=f"plugin name '{ep.name}' is already taken by another distribution"))
            continue
        seen.add(ep.name)
        info = PluginInfo(ep.name, dist, version)
        infos.append(info)
        _check_api(info, declared.get((ep.name, _normal(dist))), core)
        if info.refused:  # written for a plugin API this core does not support: never imported
            continue
        try:
            with stdout_to_stderr():  # what a plugin prints as it is imported is not the command's output
                module = load_in_time(ep.load, timeout)
                _register(manager, module, ep.name)
        except ImportTimedOut as exc:  # skipped, said once: every other plugin and command works
            info.error = str(exc)
            warnings.warn(f"{info.label} skipped: {exc}", stacklevel=2)
        except _FAULTS as exc:  # reported by `abduct plugins`, never fatal
            info.error = _describe(exc)
    for name, module in extra_plugins:
        if name in disabled:
            continue
        info = PluginInfo(name, None, None)
        infos.append(info)
        try:
            with stdout_to_stderr():
                _register(manager, module, name)
        except PluginError as exc:
            info.error = str(exc)
    return Registry(manager, infos)


def _register(manager: pluggy.PluginManager, module: object, name: str) -> None:
    """Register a plugin whose hooks all exist; one implementing an unknown hook is refused
    (pluggy would otherwise fail every later call). A hook marked
    ``optionalhook`` may be unknown: another distribution declares it (abduct-demo's ``register_demos``)."""
    manager.register(module, name=name)
    unknown = sorted(caller.name for caller in manager.get_hookcallers(module) or [] if caller.spec is None
                     and not all(impl.optionalhook for impl in caller.get_hookimpls() if impl.plugin is module))
    if unknown:
        manager.unregister(module)
        raise PluginError(f"implements unknown hook(s) {', '.join(unknown)}")


_REGISTRY: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = build_registry()
    return _REGISTRY


def reset_registry(registry: Registry | None = None) -> None:
    """Forget (or replace) the process-wide registry; for tests and long-lived processes."""
    global _REGISTRY
    _REGISTRY = registry
