"""Discovery, hooks, duplicates, broken plugins and disabling."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from abduct import PublishedRow, Registration, hookimpl
from abduct._cli import main
from abduct._registry.providers import UnknownNameError
from abduct._registry.registry import build_registry, reset_registry
from abduct.contract import hooks as hookspecs
from abduct.contract.errors import PluginError
from abduct.kit import install_command
from toy_plugin import ToyPlugin


class EveryHook:
    """One plugin implementing every hook, so each hook is exercised below."""

    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("toy-data", "d", "toy_plugin:make_choice")

    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("toy-task", "t", "toy_plugin:make_choice")

    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("toy-model", "s", "toy_plugin:make_slow")

    @hookimpl
    def register_metrics(self) -> Iterator[Registration]:
        yield Registration("toy-metric", "m", "toy_plugin:make_choice")

    @hookimpl(optionalhook=True)  # abduct-demo declares it; the registry lists what it registers anyway
    def register_demos(self) -> Iterator[Registration]:
        yield Registration("toy-demo", "a demo section", "toy_plugin:make_choice")  # run by abduct-demo

    @hookimpl
    def register_published(self) -> list[PublishedRow]:
        return [PublishedRow("toy-task", "a paper's model", "val", {"accuracy": 61.5}, "Toy et al. 2024", "Table 1")]

    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        @cli.command("toy-hello")
        def hello() -> None:
            click.echo("hello from toy")


TESTED_HOOKS = {
    "register_datasets": "dataset",
    "register_tasks": "task",
    "register_models": "model",
    "register_metrics": "metric",
    "register_commands": None,
    "register_published": None,
}
OWN_HOOKS = {"register_demos": "demo"}  # a plugin's own hook (abduct-demo's), listed as a kind where implemented


def test_every_hook_has_a_test() -> None:
    specs = {name for name in dir(hookspecs) if name.startswith("register_")}
    assert specs == set(TESTED_HOOKS), f"hooks without a test: {specs - set(TESTED_HOOKS)}"
    assert not set(OWN_HOOKS) & specs  # the core declares no hook of another distribution


@pytest.mark.parametrize("hook, kind", [(h, k) for h, k in {**TESTED_HOOKS, **OWN_HOOKS}.items() if k])
def test_registration_hooks(hook: str, kind: str) -> None:
    registry = build_registry(extra_plugins=[("every", EveryHook())])
    name = {"dataset": "toy-data"}.get(kind, f"toy-{kind}")
    comp = registry.get(kind, name)
    assert comp.plugin == "every"
    info = next(p for p in registry.plugins if p.name == "every")
    assert comp.name in info.registers[kind]


def test_register_published_hook_feeds_the_registry_and_refuses_other_records() -> None:
    registry = build_registry(extra_plugins=[("every", EveryHook())])
    rows = [r for r in registry.published() if r.task == "toy-task"]
    assert [(r.model, dict(r.metrics), r.source, r.citation) for r in rows] == [
        ("a paper's model", {"accuracy": 61.5}, "Table 1", "Toy et al. 2024")]

    class Wrong:
        @hookimpl
        def register_published(self) -> list[object]:
            return [{"task": "toy-task"}]

    broken = build_registry(extra_plugins=[("wrong", Wrong())])
    assert all(r.model != "a paper's model" for r in broken.published())
    info = next(p for p in broken.plugins if p.name == "wrong")
    assert info.published_error == "PluginError: returned dict from register_published, expected abduct.PublishedRow"
    assert info.error is None  # its other components and commands keep working


def test_published_rows_come_in_plugin_order() -> None:
    """Rows of several plugins keep the order the plugins were registered in."""

    class Rows:
        def __init__(self, model: str) -> None:
            self.model = model

        @hookimpl
        def register_published(self) -> list[PublishedRow]:
            return [PublishedRow("toy-task", self.model, None, {"accuracy": 1.0}, "c", "s")]

    plugins = [(name, Rows(name)) for name in ("first", "second", "third")]
    rows = [r.model for r in build_registry(extra_plugins=plugins).published() if r.task == "toy-task"]
    assert rows == ["first", "second", "third"]


def test_register_commands_hook(capsys: pytest.CaptureFixture[str]) -> None:
    reset_registry(build_registry(extra_plugins=[("every", EveryHook())]))
    try:
        assert main(["toy-hello"]) == 0
    finally:
        reset_registry()
    assert "hello from toy" in capsys.readouterr().out


class WidgetSpecs:
    @hookspecs.hookspec
    def register_widgets(self) -> list[str]:  # type: ignore[empty-body]
        """A plugin's own hook."""


class DeclaresWidgets:
    """Declares a hook of its own, as abduct-demo declares ``register_demos``."""

    @hookimpl
    def add_hookspecs(self, pluginmanager: object) -> None:
        pluginmanager.add_hookspecs(WidgetSpecs)  # type: ignore[attr-defined]


class OptionalWidget:
    @hookimpl(optionalhook=True)
    def register_widgets(self) -> list[str]:
        return ["optional"]


class PlainWidget:
    @hookimpl
    def register_widgets(self) -> list[str]:
        return ["plain"]


def test_a_plugin_declares_a_hook_of_its_own() -> None:
    """Implementations registered before the declaring plugin (marked optional) and after it both
    count; without the declaring plugin an optional one still loads, a plain one is refused."""
    plugins = [("early", OptionalWidget()), ("declares", DeclaresWidgets()), ("late", PlainWidget())]
    registry = build_registry(extra_plugins=plugins)
    assert {info.name: info.error for info in registry.plugins if info.name in dict(plugins)} == dict.fromkeys(
        dict(plugins))
    assert registry.manager.hook.register_widgets.spec is not None
    assert sorted(registry.manager.hook.register_widgets()) == [["optional"], ["plain"]]
    alone = build_registry(extra_plugins=[("early", OptionalWidget()), ("late", PlainWidget())])
    errors = {info.name: info.error for info in alone.plugins if info.name in ("early", "late")}
    assert errors == {"early": None, "late": "implements unknown hook(s) register_widgets"}


class OlderPlugin:
    """Written against a hook with fewer arguments: it declares none of ``register_commands``'."""

    called = False

    @hookimpl
    def register_commands(self) -> None:
        OlderPlugin.called = True


def test_an_implementation_takes_a_subset_of_the_hooks_arguments() -> None:
    registry = build_registry(extra_plugins=[("older", OlderPlugin()), ("every", EveryHook())])
    group = click.Group()
    registry.call_each("register_commands", cli=group)
    assert OlderPlugin.called and "toy-hello" in group.commands
    assert all(info.error is None for info in registry.plugins)


def test_builtins_register_through_hooks() -> None:
    registry = build_registry()
    assert {c.name for c in registry.components("model")} >= {"random", "constant"}
    assert registry.get("model", "random").plugin == "core"
    assert registry.get("metric", "exact-match").plugin == "core"


class Clash:
    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("random", "another random", "abduct._builtins.baselines:make_random")
        yield Registration("fine", "unaffected", "abduct._builtins.baselines:make_constant")


def test_duplicate_names_are_refused_naming_both_plugins() -> None:
    registry = build_registry(extra_plugins=[("clash", Clash())])
    with pytest.raises(PluginError) as err:
        registry.get("model", "random")
    assert "'core'" in str(err.value) and "'clash'" in str(err.value)
    clash = next(p for p in registry.plugins if p.name == "clash")
    assert clash.error is not None and "core" in clash.error
    assert registry.get("model", "constant").plugin == "core"


class ScoringTwin:
    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("twin", "a scorer", "toy_plugin:make_slow")


class GeneratingTwin:
    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("twin", "a generator", "toy_plugin:make_echo")


def test_a_scorer_and_a_generator_cannot_share_a_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = build_registry(extra_plugins=[("toy", ToyPlugin()), ("scoring", ScoringTwin()), ("generating", GeneratingTwin())])
    with pytest.raises(PluginError) as err:
        registry.get("model", "twin")
    assert "'scoring'" in str(err.value) and "'generating'" in str(err.value)
    reset_registry(registry)
    try:
        assert main(["eval", "toy-choice", "--model", "twin", "--data", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
        assert "'scoring' and 'generating'" in capsys.readouterr().err
        assert registry.get("model", "random").plugin == "core"  # the other models keep working
    finally:
        reset_registry()


class RaisingHook:
    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        raise RuntimeError("boom in hook")


class Malformed:
    @hookimpl
    def register_metrics(self) -> list[object]:
        return [{"name": "not-a-record"}]


class BadName:
    @hookimpl
    def register_metrics(self) -> list[Registration]:
        return [Registration("Bad Name", "x", "a:b")]


@pytest.mark.parametrize(
    "plugin, expected",
    [(RaisingHook(), "boom in hook"), (Malformed(), "expected abduct.Registration"), (BadName(), "kebab")],
)
def test_broken_hooks_are_reported_not_fatal(plugin: object, expected: str) -> None:
    registry = build_registry(extra_plugins=[("broken", plugin)])
    info = next(p for p in registry.plugins if p.name == "broken")
    assert info.error is not None and expected in info.error
    assert registry.get("model", "random")


def test_unknown_name_suggests() -> None:
    with pytest.raises(UnknownNameError) as err:
        build_registry().get("model", "randon")
    assert "did you mean 'random'" in str(err.value)


def test_lazy_factory_error_is_reported() -> None:
    class Lazy:
        @hookimpl
        def register_models(self) -> list[Registration]:
            return [Registration("ghost", "missing module", "no_such_module_xyz:make")]

    registry = build_registry(extra_plugins=[("lazy", Lazy())])
    with pytest.raises(PluginError, match="failed to load.*no_such_module_xyz"):
        registry.create("model", "ghost")


def _fake_distribution(site: Path, dist: str, module: str, body: str) -> None:
    """An installed distribution with an `abduct` entry point, as pip would lay it out."""
    (site / f"{module}.py").write_text(textwrap.dedent(body))
    info = site / f"{dist.replace('-', '_')}-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(f"[abduct]\n{module} = {module}\n")


BROKEN_BODY = "raise ImportError('this plugin needs a library that is not installed')\n"
GOOD_BODY = """
    from abduct import Registration, hookimpl

    @hookimpl
    def register_models():
        return [Registration("third-party", "a third-party scorer", "abduct._builtins.baselines:make_constant")]
"""


def _run_cli(site: Path, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "PYTHONPATH": str(site), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "abduct", *args], capture_output=True, text=True, env=env)


def test_entry_point_plugins_broken_and_good(tmp_path: Path) -> None:
    _fake_distribution(tmp_path, "abduct-broken", "broken_plugin", BROKEN_BODY)
    _fake_distribution(tmp_path, "abduct-good", "good_plugin", GOOD_BODY)
    listing = _run_cli(tmp_path, "plugins", "--json")
    assert listing.returncode == 0, listing.stderr
    plugins = {p["name"]: p for p in json.loads(listing.stdout)}
    assert "needs a library that is not installed" in plugins["broken_plugin"]["error"]
    assert plugins["broken_plugin"]["version"] == "0.3"
    assert plugins["good_plugin"]["error"] is None
    assert plugins["good_plugin"]["registers"] == {"model": ["third-party"]}
    models = _run_cli(tmp_path, "models", "--json")
    assert models.returncode == 0
    assert "third-party" in {m["name"] for m in json.loads(models.stdout)}
    human = _run_cli(tmp_path, "plugins")
    assert "ERROR: ImportError" in human.stdout


def test_disable_plugins_env(tmp_path: Path) -> None:
    _fake_distribution(tmp_path, "abduct-good", "good_plugin", GOOD_BODY)
    result = _run_cli(tmp_path, "models", "--json", env_extra={"ABDUCT_DISABLE_PLUGINS": "good_plugin, other"})
    assert "third-party" not in {m["name"] for m in json.loads(result.stdout)}
    assert "good_plugin" not in {p["name"] for p in json.loads(_run_cli(tmp_path, "plugins", "--json", env_extra={"ABDUCT_DISABLE_PLUGINS": "good_plugin"}).stdout)}


def test_core_import_is_light() -> None:
    code = (
        "import sys, abduct, abduct.host, abduct_testing;"
        "from abduct.host import build_registry; build_registry();"
        "heavy = [m for m in ('torch', 'open_clip', 'transformers') if m in sys.modules];"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_two_distributions_with_one_plugin_name(tmp_path: Path) -> None:
    _fake_distribution(tmp_path, "abduct-good", "good_plugin", GOOD_BODY)
    info = tmp_path / "abduct_copycat-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: abduct-copycat\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text("[abduct]\ngood_plugin = broken_plugin_copy\n")
    plugins = json.loads(_run_cli(tmp_path, "plugins", "--json").stdout)
    clash = [p for p in plugins if p["name"].startswith("good_plugin")]
    assert len(clash) == 2
    assert sum(p["error"] is None for p in clash) == 1
    assert any("already taken" in (p["error"] or "") for p in clash)


def test_a_missing_first_party_component_names_its_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from abduct_testing import main

    monkeypatch.setenv("ABDUCT_DISABLE_PLUGINS", "whoops,cosim,clip")  # as if they were not installed
    reset_registry(build_registry())
    data = tmp_path / "data"
    data.mkdir()
    try:
        assert main(["eval", "whoops-vqa", "--model", "random", "--data", str(data), "--out", str(tmp_path / "o")]) == 2
        whoops = install_command("abduct-whoops")  # a checkout's folder, or the index's name
        assert f"task 'whoops-vqa' comes with abduct-whoops, which is not installed: {whoops}" \
            in capsys.readouterr().err
        assert main(["whoops", "synth"]) == 2
        assert whoops in capsys.readouterr().err
        assert main(["eval", "cosim", "--model", "clip:tiny", "--data", str(data), "--out", str(tmp_path / "o")]) == 2
        assert install_command("abduct-cosim") in capsys.readouterr().err  # the task is resolved first
    finally:
        reset_registry()


@pytest.mark.parametrize("command, package", [("demo", "abduct-demo"), ("compare", "abduct-report")])
def test_a_first_party_command_not_installed_names_its_package_in_one_line(
        command: str, package: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # as with only abduct-core: the plugins that add these commands left out
    monkeypatch.setenv("ABDUCT_DISABLE_PLUGINS", "demo,report")
    reset_registry(build_registry())
    try:
        assert main([command, "--help"]) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"error: command '{command}' comes with {package}, which is not installed: {install_command(package)}"]
        assert main(["no-such-command"]) == 2  # not a first-party command: click's own message
        assert "No such command 'no-such-command'" in capsys.readouterr().err
    finally:
        reset_registry()
