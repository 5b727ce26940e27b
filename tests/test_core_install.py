"""The core on its own, the example plugin, and a broken third-party plugin, through the CLI: fresh
environments and the broken plugin in real processes, the example plugin in this one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import abduct, abduct_process, fresh_venv


def _fresh_venv(venv: Path, *packages: Path) -> Path:
    """A new environment holding only ``packages`` and their dependencies."""
    subprocess.run([*fresh_venv(venv), *map(str, packages)], check=True)
    return venv / "bin"


def test_fresh_venv_with_only_the_core(tmp_path: Path, root: Path) -> None:
    bin_dir = _fresh_venv(tmp_path / "venv", root / "packages" / "core")
    listing = subprocess.run([str(bin_dir / "abduct"), "plugins", "--json"], capture_output=True, text=True, check=True)
    plugins = json.loads(listing.stdout)
    assert [p["name"] for p in plugins] == ["core"]
    assert plugins[0]["registers"] == {"model": ["random", "constant", "cascade", "retrieve"],
                                       "metric": ["exact-match"]}
    assert plugins[0]["error"] is None
    # the models built from models are the core's own: with the baselines as parts, they build here
    for model, built_class in (("cascade:random+random", "CascadeScorer"), ("retrieve:random", "Retriever")):
        probe = f"from abduct.host import build_registry; print(type(build_registry().create('model', {model!r})).__name__)"
        built = subprocess.run([str(bin_dir / "python"), "-c", probe], capture_output=True, text=True)
        assert built.returncode == 0 and built.stdout.strip() == built_class, built.stderr
    probe = "import sys, abduct, abduct.host; assert 'torch' not in sys.modules; print('light')"
    assert subprocess.run([str(bin_dir / "python"), "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "light"
    assert subprocess.run([str(bin_dir / "abduct"), "--help"], capture_output=True, text=True).returncode == 0
    # the test kit is its own distribution (abduct-testing): the core ships none of it
    for kit in ("abduct.testing", "abduct_testing", "pytest", "hypothesis"):
        missing = subprocess.run([str(bin_dir / "python"), "-c", f"import {kit}"], capture_output=True, text=True)
        assert missing.returncode != 0 and "No module named" in missing.stderr, kit


def test_clip_installs_and_lists_without_sherlock(tmp_path: Path, root: Path) -> None:
    bin_dir = _fresh_venv(tmp_path / "venv", root / "packages" / "core", root / "packages" / "modelkit",
                          root / "packages" / "models" / "clip")
    plugins = json.loads(subprocess.run([str(bin_dir / "abduct"), "plugins", "--json"], capture_output=True, text=True,
                                        check=True).stdout)
    assert {p["name"]: p["error"] for p in plugins} == {"core": None, "clip": None}
    models = json.loads(subprocess.run([str(bin_dir / "abduct"), "models", "--json"], capture_output=True, text=True,
                                       check=True).stdout)
    assert "clip" in {m["name"] for m in models}
    probe = subprocess.run([str(bin_dir / "python"), "-c", "import abduct_sherlock"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'abduct_sherlock'" in probe.stderr
    demo = subprocess.run([str(bin_dir / "abduct"), "demo", "--steps", "1"], capture_output=True, text=True)
    assert demo.returncode == 2 and "comes with abduct-demo" in demo.stderr  # the command is abduct-demo's
    # the core came from this checkout (not an index): the hint installs the folder, which exists
    hint = Path(demo.stderr.strip().rpartition("pip install ")[2])
    assert (Path.cwd() / hint).resolve() == (root / "packages" / "demo").resolve(), demo.stderr
    assert len(demo.stderr.strip().splitlines()) == 1


def test_every_installed_plugin_loads_without_torch() -> None:
    plugins = json.loads(abduct("plugins", "--json").stdout)
    assert all(p["error"] is None for p in plugins), plugins
    code = "import sys; from abduct.host import build_registry; build_registry(); assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_example_plugin_through_the_cli(tmp_path: Path) -> None:
    assert "example-colors" in {t["name"] for t in json.loads(abduct("tasks", "--json").stdout)}
    assert abduct("example", "make-data", "--out", str(tmp_path / "d"), "--items", "16").returncode == 0
    run = abduct("eval", "example-colors", "--model", "example-color", "--data", str(tmp_path / "d"),
                 "--out", str(tmp_path / "o"), "--quiet", "--no-cache")
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "o" / "results.json").read_text())["metrics"]["accuracy"] == 100.0
    key = tmp_path / "d" / "answers.json"
    scored = abduct("score", "example-colors", "--predictions", str(key), "--answer-key", str(key), "--json")
    assert json.loads(scored.stdout) == {"accuracy": 100.0}


def test_broken_third_party_plugin_is_listed_and_harmless(tmp_path: Path) -> None:
    (tmp_path / "exploding.py").write_text("raise RuntimeError('exploding plugin')\n")
    info = tmp_path / "abduct_exploding-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: abduct-exploding\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[abduct]\nexploding = exploding\n")
    env = {"PYTHONPATH": str(tmp_path)}  # real processes: the plugin is found when the interpreter starts
    plugins = {p["name"]: p for p in json.loads(abduct_process("plugins", "--json", env=env).stdout)}
    assert plugins["exploding"]["error"] == "RuntimeError: exploding plugin"
    assert plugins["exploding"]["version"] == "1.0"
    assert abduct_process("tasks", env=env).returncode == 0
    bad = abduct_process("eval", "example-colours", "--model", "random", "--data", ".", "--out", str(tmp_path / "x"),
                         env=env)  # also the exit status of a failed eval, as the shell sees it
    assert bad.returncode == 2 and "did you mean 'example-colors'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
