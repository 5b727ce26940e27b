"""A plugin's API declaration (``[project.entry-points."abduct.api"] mine = "abduct.api:v1"``)
builds with setuptools, which refuses any entry point value but an object reference, with
hatchling, flit-core and poetry-core, and the core reads it from the installed wheel's metadata:
fixture plugins built by each backend, installed with abduct-core into a fresh environment, as a
user installs them. (pdm-backend builds it too; it is not among the backends the test machines
hold offline.)"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

from conftest import build_wheel, fresh_venv

CONSTANT = "abduct._builtins.baselines:make_constant"
# what each backend needs beyond [project] to find the module in src/
BACKENDS = {
    "setuptools": ('requires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"', ""),
    "hatchling": ('requires = ["hatchling"]\nbuild-backend = "hatchling.build"',
                  '[tool.hatch.build.targets.wheel]\npackages = ["src/{module}"]\n'),
    "flit-core": ('requires = ["flit_core>=3.4"]\nbuild-backend = "flit_core.buildapi"', ""),
    "poetry-core": ('requires = ["poetry-core>=2"]\nbuild-backend = "poetry.core.masonry.api"',
                    '[tool.poetry]\npackages = [{{include = "{module}", from = "src"}}]\n'),
}


def fixture_plugin(where: Path, backend: str, plugin: str, declared: str | None, body: str) -> Path:
    """The source of the distribution ``abduct-<plugin>`` built by ``backend``: its plugin
    ``plugin`` (module ``abduct_<plugin>``) declares ``declared`` in ``abduct.api`` (nothing if None)."""
    module = f"abduct_{plugin}"
    project = where / plugin
    (project / "src" / module).mkdir(parents=True)
    (project / "src" / module / "__init__.py").write_text(body)
    build_system, locate = BACKENDS[backend]
    api = "" if declared is None else f'[project.entry-points."abduct.api"]\n{plugin} = "{declared}"\n'
    (project / "pyproject.toml").write_text(
        f"[build-system]\n{build_system}\n\n"
        f'[project]\nname = "abduct-{plugin}"\nversion = "1.0"\ndescription = "a fixture plugin"\n'
        'dependencies = ["abduct-core"]\n\n'
        f'[project.entry-points.abduct]\n{plugin} = "{module}"\n\n{api}\n' + locate.format(module=module))
    return project


def registers(model: str) -> str:
    return textwrap.dedent(f"""
        from abduct import Registration, hookimpl

        @hookimpl
        def register_models():
            return [Registration("{model}", "a constant scorer", "{CONSTANT}")]
    """)


def test_plugins_built_by_each_backend_declare_their_api_and_are_read(tmp_path: Path, root: Path) -> None:
    src, dist = tmp_path / "src", tmp_path / "dist"
    never = "raise RuntimeError('a refused plugin was imported')\n"
    plugins = [  # (backend, plugin, declaration, its module)
        ("setuptools", "setuptoolsone", "abduct.api:v1", registers("setuptools-model")),
        ("hatchling", "hatchlingone", "abduct.api:v1", registers("hatchling-model")),
        ("flit-core", "flitone", "abduct.api:v1", registers("flit-model")),
        ("poetry-core", "poetryone", "abduct.api:v1", registers("poetry-model")),
        ("setuptools", "setuptoolsfuture", "abduct.api:v99", never),  # written for an API the core lacks
        ("hatchling", "hatchlingnone", None, registers("undeclared-model")),  # declares none: loads unchecked
    ]
    wheels = [build_wheel(fixture_plugin(src, *spec), dist / spec[1]) for spec in plugins]
    venv = tmp_path / "venv"
    subprocess.run([*fresh_venv(venv), str(root / "packages" / "core"), *map(str, wheels)], check=True)
    listing = subprocess.run([str(venv / "bin" / "abduct"), "plugins", "--json"], capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    found = {p["name"]: p for p in json.loads(listing.stdout)}
    for plugin, model in (("setuptoolsone", "setuptools-model"), ("hatchlingone", "hatchling-model"),
                          ("flitone", "flit-model"), ("poetryone", "poetry-model")):
        assert found[plugin]["api"] == 1 and found[plugin]["error"] is None and found[plugin]["note"] is None
        assert found[plugin]["registers"] == {"model": [model]}
    future = found["setuptoolsfuture"]
    assert future["api"] == 99 and future["registers"] == {}
    assert future["error"].startswith("plugin 'setuptoolsfuture' (abduct-setuptoolsfuture 1.0) is written for "
                                      "plugin API 99; this abduct-core ")
    undeclared = found["hatchlingnone"]
    assert undeclared["api"] is None and undeclared["error"] is None
    assert undeclared["note"].startswith("declares no plugin API version")
    assert undeclared["registers"] == {"model": ["undeclared-model"]}
