"""Plugins contained: a plugin that blocks, exits or prints as it is imported, or whose components
return values of the wrong kind, is one line naming it; every other command works and ``--json``
output stays valid JSON.

The fixture plugins are installed as pip installs them (a ``.dist-info`` folder with
``entry_points.txt`` beside the plugin's module) in a folder on the path: the import-time cases run
the CLI in real processes (what they break is the process), the wrong values in this one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct._cli import main
from abduct._registry.contain import TIMEOUT_VARIABLE
from abduct._registry.registry import reset_registry
from abduct_testing.toy import write_toy_data


def install(site: Path, plugin: str, body: str) -> None:
    """The distribution ``abduct-<plugin>`` with the plugin ``plugin`` (module ``plugin_<plugin>``)."""
    module = f"plugin_{plugin}"
    (site / f"{module}.py").write_text(textwrap.dedent(body))
    info = site / f"abduct_{plugin}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: abduct-{plugin}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[abduct]\n{plugin} = {module}\n\n[abduct.api]\n{plugin} = abduct.api:v1\n")


PRINTS = """
    print("hello from the plugin, at import")
    from abduct import Registration, hookimpl

    @hookimpl
    def register_models():
        print("hello from the plugin's hook")
        return [Registration("loud-model", "a constant scorer", "plugin_loud:make")]

    @hookimpl
    def register_datasets():
        return [Registration("toy", "toy questions", "abduct_testing.toy:make_dataset")]

    @hookimpl
    def register_tasks():
        return [Registration("toy-choice", "toy multiple choice", "abduct_testing.toy:make_choice")]

    def make(spec, settings):
        print("hello from the plugin's factory")
        from abduct._builtins.baselines import ConstantScorer
        return ConstantScorer()
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("site")
    install(site, "stuck", "import time\ntime.sleep(600)\n")
    install(site, "leaving", "import sys\nprint('bye')\nsys.exit(3)\n")
    install(site, "loud", PRINTS)
    return site


def run_cli(site: Path, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run([sys.executable, "-m", "abduct", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": path, TIMEOUT_VARIABLE: "1", **env})


def test_version_imports_no_plugin(site: Path) -> None:
    """With no time limit, the blocked plugin would hold any command that imports it forever."""
    done = run_cli(site, "--version", timeout=60, **{TIMEOUT_VARIABLE: "0"})
    assert done.returncode == 0 and done.stdout.startswith("abduct, version"), done.stderr
    assert done.stderr == ""  # nor prints anything a plugin prints


def test_a_plugin_blocked_at_import_is_skipped_and_named_once(site: Path) -> None:
    start = time.monotonic()
    done = run_cli(site, "plugins", "--json")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - start < 60  # the process ends though the import thread still waits
    listed = {p["name"]: p for p in json.loads(done.stdout)}
    assert "did not finish within 1 s" in listed["stuck"]["error"]
    assert TIMEOUT_VARIABLE in listed["stuck"]["error"]
    warned = [line for line in done.stderr.splitlines() if "stuck" in line]
    assert warned == [f"warning: plugin 'stuck' (abduct-stuck 1.0) skipped: its import did not finish within 1 s "
                      f"({TIMEOUT_VARIABLE})"]
    assert "Traceback" not in done.stderr
    text = run_cli(site, "plugins")
    assert "  ERROR: its import did not finish within 1 s" in text.stdout
    tasks = run_cli(site, "tasks", "--json")
    assert tasks.returncode == 0 and json.loads(tasks.stdout), tasks.stderr


def test_a_plugin_exiting_at_import_is_one_error_and_every_command_works(site: Path) -> None:
    done = run_cli(site, "plugins", "--json")
    assert done.returncode == 0, done.stderr
    listed = {p["name"]: p for p in json.loads(done.stdout)}
    assert listed["leaving"]["error"] == "SystemExit: 3"
    assert listed["core"]["error"] is None
    models = run_cli(site, "models", ABDUCT_DISABLE_PLUGINS="stuck")
    assert models.returncode == 0 and "constant" in models.stdout
    assert "Traceback" not in done.stderr + models.stderr


def test_a_bad_timeout_is_one_line(site: Path) -> None:
    done = run_cli(site, "tasks", **{TIMEOUT_VARIABLE: "soon"})
    assert done.returncode == 2
    assert done.stderr == f"error: {TIMEOUT_VARIABLE}='soon' is not a number of seconds\n"


def test_what_a_plugin_prints_goes_to_stderr_and_json_stays_valid(site: Path, tmp_path: Path) -> None:
    quick = {"ABDUCT_DISABLE_PLUGINS": "stuck"}  # no second's wait for the blocked one in each command
    listed = run_cli(site, "plugins", "--json", **quick)
    assert listed.returncode == 0
    assert {p["name"] for p in json.loads(listed.stdout)} >= {"loud", "core"}
    assert "hello from the plugin, at import" in listed.stderr
    assert "hello from the plugin's hook" in listed.stderr

    data = write_toy_data(tmp_path / "data", items=4)
    done = run_cli(site, "eval", "toy-choice", "--model", "loud-model", "--data", str(data),
                   "--out", str(tmp_path / "run"), "--json", "--no-cache", "--ci-resamples", "0", **quick)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["metrics"]["n"] == 4
    assert "hello from the plugin's factory" in done.stderr

    scored = tmp_path / "answers.json"
    scored.write_text(json.dumps({"q000": 0}))
    score = run_cli(site, "score", "toy-choice", "--predictions", str(scored), "--answer-key", str(scored), "--json",
                    **quick)
    assert score.returncode == 0, score.stderr
    assert json.loads(score.stdout) == {"accuracy": 100.0}


# -- values of the wrong kind ----------------------------------------------------------------------
FAULTY = """
    import math

    import numpy as np

    from abduct import Registration, hookimpl
    from abduct.contract.stages import Custom, Generate, GenerationItem, Stage
    from abduct.contract.records import GenerationRequest, VisualInput
    from abduct.contract.task import Evaluation
    from abduct_testing.toy import ToyChoice

    MODELS = {
        "wide": lambda v, t: np.zeros((len(v), len(t) + 1)),
        "narrow": lambda v, t: np.zeros((len(v), len(t) - 1)),
        "nan": lambda v, t: np.full((len(v), len(t)), math.nan),
        "words": lambda v, t: [["high"] * len(t) for _ in v],
        "raises": lambda v, t: 1 / 0,
    }

    class Matrix:
        accepts = frozenset({"image", "context"})

        def __init__(self, how):
            self.how = how

        def score_matrix(self, visuals, texts):
            return MODELS[self.how](visuals, texts)

    class Pairs:
        accepts = frozenset({"image", "context"})

        def score(self, visuals, texts):
            return np.zeros(len(texts) + 1)

    class Dual:
        accepts = frozenset({"image", "context"})

        def encode_visual(self, visuals):
            return np.ones((len(visuals), 3))

        def encode_text(self, texts):
            return np.ones((len(texts), 4))

    class Mute:
        accepts = frozenset({"image"})

        def generate(self, requests, decoding, pool=None):
            return [None for _ in requests]

    def make_model(spec, settings):
        kinds = {"pairs": Pairs, "dual": Dual, "mute": Mute}
        if spec.argument == "factory":
            raise RuntimeError("no weights here")
        if spec.argument == "exits":
            raise SystemExit(4)
        return kinds[spec.argument]() if spec.argument in kinds else Matrix(spec.argument)

    class Grid(ToyChoice):
        \"\"\"Every question against every choice text as one matrix (as a retrieval task scores).\"\"\"

        def plan(self, examples, run):
            def step(models, payload):
                texts = [text for it in payload for text in it["choices"]]
                matrix = models.require_scorer().score_matrix([VisualInput(it["image"]) for it in payload], texts)
                return [{"id": it["id"], "best": int(np.argmax(row))} for it, row in zip(payload, matrix)]
            return [Stage("grid", Custom([("all", list(examples))], step, frozenset({"score"})))]

        def finish(self, examples, records, run):
            return Evaluation({"n": len(records["grid"])}, records["grid"])

    class Describe(ToyChoice):
        def plan(self, examples, run):
            return [Stage("describe", Generate([GenerationItem(it["id"], GenerationRequest(
                VisualInput(it["image"]), "Describe."), (it["caption"],)) for it in examples]))]

        def finish(self, examples, records, run):
            return Evaluation({"n": len(records["describe"])}, records["describe"])

    class Planned(ToyChoice):
        def __init__(self, how):
            self.how = how

        def plan(self, examples, run):
            if self.how == "plan-none":
                return None
            if self.how == "plan-text":
                return "questions"
            if self.how == "plan-request":
                return [Stage("questions", request="choose")]
            if self.how == "plan-raises":
                raise KeyError("label")
            return super().plan(examples, run)

        def finish(self, examples, records, run):
            if self.how == "finish-raises":
                raise ValueError("no records")
            if self.how == "finish-dict":
                return {"accuracy": 1.0}
            return super().finish(examples, records, run)

    def make_task(spec, settings):
        return {"grid": Grid, "describe": Describe}.get(spec.argument, lambda: Planned(spec.argument))()

    @hookimpl
    def register_models():
        return [Registration("faulty", "a model returning nonsense", "plugin_faulty:make_model")]

    @hookimpl
    def register_datasets():
        return [Registration("toy", "toy questions", "abduct_testing.toy:make_dataset")]

    @hookimpl
    def register_tasks():
        return [Registration("faulty-task", "a task returning nonsense", "plugin_faulty:make_task"),
                Registration("toy-choice", "toy multiple choice", "abduct_testing.toy:make_choice")]
"""

MODEL = "model 'faulty' (plugin 'faulty')"
TASK = "task 'faulty-task' (plugin 'faulty')"
KINDS = ", ".join(("Choose", "Compare", "Generate", "Judge", "Custom"))
WRONG = {  # (task, model) -> the one line
    ("faulty-task:grid", "faulty:wide"): f"{MODEL} returned shape (4, 17) from score_matrix for 4 visuals and 16 texts "
                                         "(expected (4, 16))",
    ("faulty-task:grid", "faulty:narrow"): f"{MODEL} returned shape (4, 15) from score_matrix for 4 visuals and 16 "
                                           "texts (expected (4, 16))",
    ("faulty-task:grid", "faulty:nan"): f"{MODEL} returned 64 non-finite value(s) (NaN or infinity) among its scores "
                                        "or embeddings; they must be finite numbers",
    ("faulty-task:grid", "faulty:words"): f"{MODEL} returned <U4 values from score_matrix; expected numbers",
    ("faulty-task:grid", "faulty:raises"): f"{MODEL}: score_matrix raised ZeroDivisionError: division by zero",
    ("faulty-task:grid", "faulty:dual"): f"{MODEL} encodes images in 3 dimensions and texts in 4; a dual encoder's "
                                         "two sides must match",
    ("toy-choice", "faulty:pairs"): f"{MODEL} returned shape (5,) from score for 4 pairs (expected (4,))",
    ("faulty-task:describe", "faulty:mute"): f"{MODEL} returned NoneType from generate for request 1 of 4 (expected "
                                             "one string each)",
    ("toy-choice", "faulty:factory"): "model 'faulty' from plugin 'faulty': its factory raised RuntimeError: "
                                      "no weights here",
    ("toy-choice", "faulty:exits"): "model 'faulty' from plugin 'faulty': its factory raised SystemExit: 4",
    ("faulty-task:plan-none", "constant"): f"{TASK}: plan() returned NoneType; expected a list of Stage records",
    ("faulty-task:plan-text", "constant"): f"{TASK}: plan() returned str; expected a list of Stage records",
    ("faulty-task:plan-request", "constant"): f"{TASK}: stage 'questions' asks str; expected one of {KINDS}",
    ("faulty-task:plan-raises", "constant"): f"{TASK}: plan() raised KeyError: 'label'",
    ("faulty-task:finish-raises", "constant"): f"{TASK}: finish() raised ValueError: no records",
    ("faulty-task:finish-dict", "constant"): f"{TASK}: finish() returned dict; expected an Evaluation",
}


@pytest.fixture(scope="module")
def faulty_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("faulty-site")
    install(site, "faulty", FAULTY)
    write_toy_data(site / "data", items=4)
    return site


@pytest.fixture
def installed(faulty_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The faulty plugin on the path, as an installed one is; a registry that finds it."""
    monkeypatch.syspath_prepend(str(faulty_site))
    reset_registry()
    yield faulty_site
    reset_registry()


@pytest.mark.parametrize("task, model", list(WRONG), ids=[f"{t}-{m}" for t, m in WRONG])
def test_a_wrong_value_from_a_plugin_is_one_line_naming_it(task: str, model: str, installed: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", task, "--model", model, "--data", str(installed / "data"), "--out", str(tmp_path / "run"),
                 "--no-cache", "--ci-resamples", "0", "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", f"error: {WRONG[(task, model)]}\n")


def test_the_faulty_plugins_good_parts_and_other_commands_work(installed: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "faulty-task", "--model", "constant", "--data", str(installed / "data"),
                 "--out", str(tmp_path / "run"), "--no-cache", "--ci-resamples", "0", "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["metrics"]["n"] == 4
    assert main(["plugins", "--json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    assert listed["faulty"]["error"] is None and listed["faulty"]["registers"]["model"] == ["faulty"]
