"""The plugin API version: a distribution declares the API its plugins are written for (entry
points of the group ``abduct.api``, ``mine = "abduct.api:v1"``); a plugin written for one this core does not support is listed
with one line naming it and the versions, and not loaded; the others keep working.

The fixture distributions are laid out as pip installs them (a ``.dist-info`` folder with
``entry_points.txt`` beside the plugin's module) in a folder on PYTHONPATH, and the CLI runs in
real processes, which find them when the interpreter starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from abduct._registry.providers import UnknownNameError
from abduct._registry.registry import api_reference, build_registry
from abduct.contract.errors import PluginError
from abduct.contract.hooks import PLUGIN_API, SUPPORTED_PLUGIN_APIS
from abduct_testing.toy import write_toy_data

CONSTANT = "abduct._builtins.baselines:make_constant"
UNDECLARED = object()  # a distribution without an abduct.api entry point


def plugin_body(registrations: str) -> str:
    return textwrap.dedent(f"""
        from abduct import Registration, hookimpl

        @hookimpl
        def register_models():
            return [{registrations}]
    """)


def install(site: Path, dist: str, plugin: str, api: object, body: str, version: str = "1.0") -> None:
    """The distribution ``dist`` with the plugin ``plugin`` (module ``plugin_<plugin>``), declaring
    ``api`` as its plugin API (a number as ``abduct.api:vN``, text as it is, nothing when UNDECLARED)."""
    module = f"plugin_{plugin.replace('-', '_')}"
    (site / f"{module}.py").write_text(body)
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    value = api_reference(api) if isinstance(api, int) else api
    declared = "" if api is UNDECLARED else f"\n[abduct.api]\n{plugin} = {value}\n"
    (info / "entry_points.txt").write_text(f"[abduct]\n{plugin} = {module}\n{declared}")


def model(name: str) -> str:
    return plugin_body(f'Registration("{name}", "a constant scorer", "{CONSTANT}")')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Plugins written for each plugin API, a garbage declaration and none at all."""
    site = tmp_path_factory.mktemp("site")
    install(site, "abduct-ancient", "ancient", 0, model("ancient-model"))
    install(site, "abduct-current", "current", 1, plugin_body(
        f'Registration("current-model", "a constant scorer", "{CONSTANT}")') + textwrap.dedent("""
        @hookimpl
        def register_datasets():
            return [Registration("toy", "toy questions", "abduct_testing.toy:make_dataset")]

        @hookimpl
        def register_tasks():
            return [Registration("toy-choice", "toy multiple choice", "abduct_testing.toy:make_choice")]
    """))
    install(site, "abduct-future", "future", 99, model("future-model"))
    install(site, "abduct-undeclared", "undeclared", UNDECLARED, model("undeclared-model"))
    install(site, "abduct-garbage", "garbage", "four", model("garbage-model"))
    # a bare number (which setuptools refuses to build) is not a declaration either
    install(site, "abduct-bare", "bare", "1", model("bare-model"))
    # a refused plugin's module is never imported: importing this one would fail loudly
    (site / "plugin_ancient.py").write_text("raise RuntimeError('a refused plugin was imported')\n")
    return site


def run_cli(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    return subprocess.run([sys.executable, "-m", "abduct", *args], capture_output=True, text=True, env=env)


def core_version() -> str:
    import importlib.metadata as md

    return md.version("abduct-core")


def supported() -> str:
    return f"{SUPPORTED_PLUGIN_APIS[0]}"


def test_the_first_release_supports_plugin_api_1_only() -> None:
    assert PLUGIN_API == 1 and list(SUPPORTED_PLUGIN_APIS) == [1]


def test_plugins_json_lists_each_plugin_with_its_api_and_refuses_the_unsupported(site: Path) -> None:
    listing = run_cli(site, "plugins", "--json")
    assert listing.returncode == 0, listing.stderr
    plugins = {p["name"]: p for p in json.loads(listing.stdout)}
    assert plugins["core"]["api"] == PLUGIN_API
    ancient = plugins["ancient"]
    assert ancient["error"] == (
        f"plugin 'ancient' (abduct-ancient 1.0) is written for plugin API 0; this abduct-core {core_version()} "
        f"supports plugin API {supported()}: upgrade abduct-ancient or install an abduct-core that supports plugin API 0")
    assert ancient["api"] == 0 and ancient["registers"] == {}
    assert plugins["future"]["error"].startswith(
        f"plugin 'future' (abduct-future 1.0) is written for plugin API 99; this abduct-core {core_version()} "
        f"supports plugin API {supported()}: upgrade abduct-core")
    garbage = plugins["garbage"]
    assert garbage["api"] is None and garbage["registers"] == {}
    assert garbage["error"].startswith("plugin 'garbage' (abduct-garbage 1.0) declares plugin API 'four' (abduct.api), "
                                       "which is not of the form 'abduct.api:v1'")
    assert plugins["bare"]["error"].startswith("plugin 'bare' (abduct-bare 1.0) declares plugin API '1' (abduct.api), "
                                               "which is not of the form 'abduct.api:v1'")
    assert plugins["bare"]["registers"] == {}
    for refused in ("ancient", "future", "garbage", "bare"):
        assert "\n" not in plugins[refused]["error"]
    current = plugins["current"]
    assert current["error"] is None and current["note"] is None and current["api"] == 1
    assert current["registers"] == {"dataset": ["toy"], "task": ["toy-choice"], "model": ["current-model"]}
    undeclared = plugins["undeclared"]
    assert undeclared["error"] is None and undeclared["api"] is None
    assert undeclared["registers"] == {"model": ["undeclared-model"]}
    assert undeclared["note"].startswith("declares no plugin API version")


def test_plugins_text_gives_the_reason_in_one_line(site: Path) -> None:
    listing = run_cli(site, "plugins")
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    at = lines.index("ancient (abduct-ancient 1.0)")
    assert lines[at + 1] == (
        f"  ERROR: plugin 'ancient' (abduct-ancient 1.0) is written for plugin API 0; this abduct-core "
        f"{core_version()} supports plugin API {supported()}: upgrade abduct-ancient or install an abduct-core "
        "that supports plugin API 0")
    assert not lines[at + 2].startswith("  ")  # nothing registered: the next plugin follows
    at = lines.index("undeclared (abduct-undeclared 1.0)")
    assert lines[at + 2].startswith("  note: declares no plugin API version")


def test_eval_refuses_the_model_of_an_unsupported_plugin_in_one_line_and_runs_the_others(
        site: Path, tmp_path: Path) -> None:
    data = write_toy_data(tmp_path / "data", items=4)
    refused = run_cli(site, "eval", "toy-choice", "--model", "ancient-model", "--data", str(data),
                      "--out", str(tmp_path / "ancient"), "--quiet")
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert refused.stderr.startswith("error: unknown model 'ancient-model'")
    assert (f"plugin 'ancient' (abduct-ancient 1.0) is written for plugin API 0; this abduct-core "
            f"{core_version()} supports plugin API {supported()}") in refused.stderr
    assert not (tmp_path / "ancient").exists()
    # a plugin written for the current API and one that declares nothing both run
    for name in ("current-model", "undeclared-model"):
        done = run_cli(site, "eval", "toy-choice", "--model", name, "--data", str(data),
                       "--out", str(tmp_path / name), "--quiet")
        assert done.returncode == 0, done.stderr
        assert (tmp_path / name / "results.json").exists()


def test_a_first_party_package_written_for_another_api_is_named_not_called_missing(tmp_path: Path) -> None:
    # installed ahead of any real abduct-whoops on the path, so this is the abduct-whoops the process sees
    install(tmp_path, "abduct-whoops", "whoops", 2, "raise RuntimeError('a refused plugin was imported')\n",
            version="0.0.1")
    reason = "plugin 'whoops' (abduct-whoops 0.0.1) is written for plugin API 2"
    task = run_cli(tmp_path, "eval", "whoops-vqa", "--model", "random", "--data", str(tmp_path), "--out",
                   str(tmp_path / "o"))
    assert task.returncode == 2
    assert task.stderr.startswith("error: task 'whoops-vqa' comes with abduct-whoops, which is not loaded: " + reason)
    assert len(task.stderr.strip().splitlines()) == 1
    command = run_cli(tmp_path, "whoops", "synth")
    assert command.returncode == 2
    assert command.stderr.startswith("error: command 'whoops' comes with abduct-whoops, which is not loaded: " + reason)
    assert len(command.stderr.strip().splitlines()) == 1


def test_an_unknown_command_names_the_plugins_not_loaded(site: Path) -> None:
    unknown = run_cli(site, "ancient-command")
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("error: no such command 'ancient-command'; not loaded: plugin '")
    assert len(unknown.stderr.strip().splitlines()) == 1
    assert run_cli(site, "models").returncode == 0


def test_in_process_registry_refuses_without_importing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = f"old{tmp_path.name.replace('-', '').replace('_', '').lower()}"
    install(tmp_path, f"abduct-{plugin}", plugin, 2, "raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = build_registry()
    info = next(p for p in registry.plugins if p.name == plugin)
    assert info.refused and info.api == 2 and info.error is not None and "written for plugin API 2" in info.error
    assert f"plugin_{plugin}" not in sys.modules
    assert info in registry.refused()
    assert registry.refused(f"abduct_{plugin.upper()}") == [info]  # distribution names compare as pip does
    with pytest.raises(UnknownNameError, match=f"unknown model 'zzzzzzzz'.*; not loaded: plugin '{plugin}'"):
        registry.get("model", "zzzzzzzz")
    assert registry.get("model", "random").plugin == "core"  # the others keep working


def test_a_declaration_is_matched_by_entry_name_and_distribution(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = f"pair{tmp_path.name.replace('-', '').replace('_', '').lower()}"
    install(tmp_path, f"abduct-{plugin}", plugin, UNDECLARED, model(f"{plugin}-model"))
    other = tmp_path / "abduct_meddler-1.0.dist-info"  # another distribution declares an API for its name
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: abduct-meddler\nVersion: 1.0\n")
    (other / "entry_points.txt").write_text(f"[abduct.api]\n{plugin} = {api_reference(2)}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = build_registry()
    info = next(p for p in registry.plugins if p.name == plugin)
    assert info.error is None and info.api is None and not info.refused
    assert registry.get("model", f"{plugin}-model").plugin == plugin


def test_a_refused_first_party_component_is_a_plugin_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, "abduct-metrics", "metrics", 2, "raise RuntimeError('imported')\n", version="0.0.1")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = build_registry()
    with pytest.raises(PluginError, match="^metric 'bleu' comes with abduct-metrics, which is not loaded: plugin "
                                          r"'metrics' \(abduct-metrics 0.0.1\) is written for plugin API 2; "):
        registry.get("metric", "bleu")
