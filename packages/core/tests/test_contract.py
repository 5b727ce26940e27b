"""The explicit contract: declarations checked when a component is built, the model-to-engine
wiring (``engine_for``), and what reaches a task through the run — a dataset built with the
user's options, an artifact that appears only with a finished run."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct import Choice, Evaluation, MetricResult, PluginError, Registration, Settings, Spec, VisualInput, hookimpl
from abduct._registry.registry import Registry, build_registry, reset_registry
from abduct.contract import ScoreContext
from abduct.contract.stages import Choose, Records, RunInfo, Stage
from abduct.host import engine_for, model_traits, task_traits
from abduct.kit import accuracy
from abduct_testing import main
from toy_plugin import ToyChoice, ToyPlugin

SEEN: dict[str, Any] = {}


class Declares:
    """A scorer whose declarations the test sets."""

    def __init__(self, **declarations: Any) -> None:
        for key, value in declarations.items():
            setattr(self, key, value)

    def score(self, visuals: Any, texts: Any) -> np.ndarray:
        return np.zeros(len(texts))


@pytest.mark.parametrize("declarations, message", [
    ({"accepts": {"image", "smell"}}, "model 'm' declares unknown accepts ['smell']"),
    ({"accepts": "image"}, "model 'm' declares accepts = 'image'; expected a set of features"),
    ({"needs": {"region"}}, "model 'm' needs ['region'], which it does not accept"),
    ({"fingerprint": 5}, "model 'm' declares fingerprint = 5; expected a non-empty string"),
    ({"fingerprint": ""}, "model 'm' declares fingerprint = ''"),
])
def test_malformed_model_declarations_are_one_line_naming_the_model(declarations: dict[str, Any], message: str) -> None:
    with pytest.raises(PluginError, match=message.replace("[", r"\[").replace("]", r"\]")):
        model_traits(Declares(**declarations), "m")


def test_model_traits_defaults_and_abilities() -> None:
    traits = model_traits(Declares(), "m")
    assert traits.accepts == {"image"} and traits.needs == frozenset() and traits.fingerprint is None
    assert traits.abilities == ["score"] and not traits.dual_encoder


class BadSplit(ToyChoice):
    default_split = ""


class BadKey(ToyChoice):
    needs_answer_key = "no"


class BadInfo(ToyChoice):
    metric_info = {"accuracy": 1.0}


class BadView(ToyChoice):
    view = "images"  # type: ignore[assignment]


@pytest.mark.parametrize("task, message", [
    (BadSplit(), "task 't' declares default_split = ''"),
    (BadKey(), "task 't' declares needs_answer_key = 'no'; expected True or False"),
    (BadInfo(), "task 't' declares a metric_info that is not a mapping of MetricInfo"),
    (BadView(), "task 't' declares view = 'images'; expected a method"),
])
def test_malformed_task_declarations(task: object, message: str) -> None:
    with pytest.raises(PluginError, match=message):
        task_traits(task, "t")


def make_bad_model(spec: Spec, settings: Settings) -> Declares:
    return Declares(accepts={"smell"})


def make_nothing(spec: Spec, settings: Settings) -> object:
    return object()


def make_bad_task(spec: Spec, settings: Settings) -> BadKey:
    return BadKey()


class Broken:
    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("smelly", "declares an unknown feature", f"{__name__}:make_bad_model")
        yield Registration("inert", "neither scores nor generates", f"{__name__}:make_nothing")

    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("bad-key", "a malformed declaration", f"{__name__}:make_bad_task")


@pytest.mark.parametrize("kind, name, message", [
    ("model", "smelly", "model 'smelly' declares unknown accepts"),
    ("model", "inert", "model 'inert' neither scores nor generates"),
    ("task", "bad-key", "task 'bad-key' declares needs_answer_key"),
])
def test_the_registry_checks_declarations_when_it_builds(kind: str, name: str, message: str) -> None:
    registry = build_registry(extra_plugins=[("broken", Broken())])
    with pytest.raises(PluginError, match=message):
        registry.create(kind, name)


def test_eval_refuses_a_malformed_model_before_reading_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reset_registry(build_registry(extra_plugins=[("toy", ToyPlugin()), ("broken", Broken())]))
    try:
        code = main(["eval", "toy-choice", "--model", "smelly", "--data", str(tmp_path), "--out", str(tmp_path / "o")])
    finally:
        reset_registry()
    assert code == 2 and "model 'smelly' declares unknown accepts ['smell']" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_engine_for_caches_only_a_model_that_says_what_it_is(tmp_path: Path) -> None:
    registry = build_registry()
    settings = Settings(batch_size=8)
    plain = engine_for("constant:0.5", settings, registry=registry, cache_dir=tmp_path)
    assert plain.scoring is not None and plain.generation is None
    assert plain.loaded.traits.fingerprint == "constant-0.5"
    random = engine_for("random", settings, registry=registry, cache_dir=tmp_path)
    assert random.scoring is not None and random.generation is not None and random.generation.cache is not None
    assert engine_for("random", settings, registry=registry, use_cache=False).generation.cache is None  # type: ignore[union-attr]
    anonymous = Declares()
    from abduct._engine.models import LoadedModel

    loaded = LoadedModel(Spec("anon"), anonymous, random.loaded.decoding)
    assert engine_for(loaded, settings, cache_dir=tmp_path).scoring.cache is None  # type: ignore[union-attr]


# -- what a task does through the run -------------------------------------------------------
class Through:
    """A task that reads its dataset (options and all) through the runner, returns an artifact,
    and can fail late."""

    default_split = "val"
    dataset = "toy-data"
    optional_inputs = frozenset({"image", "context"})
    metric_info = ToyChoice.metric_info

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def plan(self, examples: Sequence[dict[str, Any]], run: RunInfo) -> list[Stage]:
        return [Stage("q", Choose([Choice(r["id"], VisualInput(r["image"], context=r["question"]), tuple(r["choices"]),
                                          r["label"]) for r in examples]))]

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = records["q"]
        value = float("nan") if self.fail else accuracy(answers)
        return Evaluation({"accuracy": value, "n": len(answers)}, answers,
                          artifacts={"submission.json": {"n": len(answers)}})


class ToyData:
    def __init__(self, **options: str) -> None:
        self.options = options

    def load(self, data_dir: Path, split: str) -> list[Any]:
        SEEN["dataset_options"] = self.options
        return [{**r, "image": str(data_dir / r["image"])} for r in json.loads((data_dir / "toy.json").read_text())]

    def check(self, data_dir: Path) -> list[str]:
        return []


def make_through(spec: Spec, settings: Settings, *, fail: bool = False) -> Through:
    return Through(fail)


def make_toy_data(spec: Spec, settings: Settings, *, root: str = "") -> ToyData:
    return ToyData(root=root)


class ThroughPlugin:
    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("through", "reads through the run", f"{__name__}:make_through")

    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("toy-data", "a dataset with an option", f"{__name__}:make_toy_data")


@pytest.fixture
def through_registry() -> Iterator[None]:
    reset_registry(build_registry(extra_plugins=[("toy", ToyPlugin()), ("through", ThroughPlugin())]))
    yield
    reset_registry()


def test_dataset_options_reach_the_task_and_artifacts_come_with_the_results(
        through_registry: None, toy_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["eval", "through", "--model", "random", "--data", str(toy_data), "--out", str(out),
                 "--dataset", "toy-data,root=/elsewhere", "--quiet"]) == 0
    assert SEEN["dataset_options"] == {"root": "/elsewhere"}
    assert json.loads((out / "submission.json").read_text()) == {"n": 12}


def test_a_runs_echo_and_results_name_the_tasks_artifacts(through_registry: None, toy_data: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A file the task writes beside the run's own (a submission file) is said where it went."""
    out = tmp_path / "run"
    capsys.readouterr()
    assert main(["eval", "through", "--model", "random", "--data", str(toy_data), "--out", str(out)]) == 0
    wrote = [line for line in capsys.readouterr().out.splitlines() if line.startswith("wrote ")]
    assert len(wrote) == 1 and wrote[0].startswith("wrote results.json, predictions.jsonl, units.json, submission.json")
    assert wrote[0].endswith(f" in {out}"), wrote
    assert json.loads((out / "results.json").read_text())["artifacts"] == ["submission.json"]


def test_a_refused_run_leaves_no_artifact(through_registry: None, toy_data: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["eval", "through,fail=true", "--model", "random", "--data", str(toy_data), "--out", str(out),
                 "--quiet"]) == 2
    assert "metric 'accuracy' came out nan" in capsys.readouterr().err
    assert not (out / "submission.json").exists() and not (out / "results.json").exists()


def test_an_unknown_dataset_or_option_is_refused_before_the_run(
        through_registry: None, toy_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for given, message in (("no-such-data", "unknown dataset 'no-such-data'"), ("toy-data,depth=3", "depth")):
        assert main(["eval", "through", "--model", "random", "--data", str(toy_data), "--out", str(tmp_path / "o"),
                     "--dataset", given]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "o" / "results.json").exists()


def test_a_dataset_the_task_does_not_read_is_refused(through_registry: None, toy_data: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "through", "--model", "random", "--data", str(toy_data), "--out", str(tmp_path / "o"),
                 "--dataset", "toy"]) == 2
    assert capsys.readouterr().err.strip() == "error: --dataset toy: task 'through' reads dataset 'toy-data', not 'toy'"
    assert not (tmp_path / "o").exists()


def test_check_runs_the_tasks_dataset_check(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "toy-choice", "--data", str(toy_data)]) == 0
    assert capsys.readouterr().out.strip() == f"{toy_data}: no problems found"
    (tmp_path / "empty").mkdir()
    assert main(["check", "toy-choice", "--data", str(tmp_path / "empty"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == [f"{tmp_path / 'empty' / 'toy.json'}: not found"]
    assert main(["check", "toy-choice", "--data", str(tmp_path / "nowhere")]) == 2


def test_artifact_names_cannot_replace_a_runs_outputs() -> None:
    from abduct._run.runner import Run

    run = Run(data_dir=Path("."), split="val")
    for name in ("results.json", "../x.json", ".hidden"):
        with pytest.raises(Exception, match="plain file name"):
            run.write_artifact(name, {})


def make_wrapper(spec: Spec, settings: Settings, registry: Registry) -> Any:
    """``wrapper:<model>``: the model it names, built by the registry that builds the wrapper
    (as the built-in cascade: and retrieve: build their parts)."""
    return registry.create("model", spec.argument or "", settings)


class WrapperPlugin:
    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("wrapper", "builds the model it names", f"{__name__}:make_wrapper")


def test_factories_build_what_they_hold_from_the_registry_that_builds_them() -> None:
    """A factory with a third positional parameter finds a model that only a test's registry
    has, and never one that only the process-wide registry has."""
    registry = build_registry(extra_plugins=[("toy", ToyPlugin()), ("wrapper", WrapperPlugin())])
    reset_registry(build_registry())  # the process-wide registry lacks the toy models
    try:
        assert type(registry.create("model", "wrapper:matrix-only")).__name__ == "MatrixOnly"
        reset_registry(build_registry(extra_plugins=[("toy", ToyPlugin())]))  # now only the process-wide one has them
        with pytest.raises(Exception, match="unknown model 'matrix-only'"):
            build_registry(extra_plugins=[("wrapper", WrapperPlugin())]).create("model", "wrapper:matrix-only")
    finally:
        reset_registry()


def test_a_run_builds_each_metric_once() -> None:
    """plan() builds its metrics to fail early and finish() asks again: one build per name and options."""
    from abduct._run.runner import Run

    run = Run(data_dir=Path("."), split="val", registry=build_registry())
    first = run.metric("exact-match")
    assert run.metric("exact-match") is first
    assert Run(data_dir=Path("."), split="val", registry=build_registry()).metric("exact-match") is not first


# -- score_files's context: the registry running `abduct score` builds the metrics -------------------
class OnlyHere:
    """A metric that only the test registry registers: the process's registry cannot build it."""

    def compute(self, predictions: Mapping[str, str], references: Mapping[str, Sequence[str]],
                **kwargs: Any) -> MetricResult:
        return MetricResult({"hits": float(sum(predictions[k] in references[k] for k in references))})


class ScoresWithContext(ToyChoice):
    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None,
                    *, context: ScoreContext) -> dict[str, float]:
        preds, key = json.loads(predictions.read_text()), json.loads(answer_key.read_text())
        return dict(context.metric("only-here").compute(preds, {k: [v] for k, v in key.items()}).corpus)


def make_only_here(spec: Spec, settings: Settings) -> OnlyHere:
    return OnlyHere()


def make_scores_with_context(spec: Spec, settings: Settings) -> ScoresWithContext:
    return ScoresWithContext()


class ContextPlugin:
    @hookimpl
    def register_metrics(self) -> Iterator[Registration]:
        yield Registration("only-here", "A test registry's metric", "test_contract:make_only_here")

    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("toy-scored", "Scores files with its context's metric", "test_contract:make_scores_with_context")


def test_score_files_gets_the_metrics_of_the_registry_running_the_command(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.json").write_text(json.dumps({"a": "x", "b": "y"}))
    (tmp_path / "k.json").write_text(json.dumps({"a": "x", "b": "z"}))
    reset_registry(build_registry(extra_plugins=[("toy", ToyPlugin()), ("ctx", ContextPlugin())]))
    try:
        assert main(["score", "toy-scored", "--predictions", str(tmp_path / "p.json"),
                     "--answer-key", str(tmp_path / "k.json"), "--json"]) == 0
    finally:
        reset_registry()
    assert json.loads(capsys.readouterr().out) == {"hits": 1.0}


def test_what_a_model_says_shaped_its_inputs_is_checked_and_recorded(tmp_path: Path) -> None:
    """``describe_inputs()``: a mapping of JSON values, recorded as results.json's ``model.inputs``
    with the run's ``label`` (``--label``, else the spec without URL-valued options); a model
    that says nothing records nothing; anything else is one line naming the model."""
    from abduct._declare.traits import input_facts
    from abduct._engine.models import load_model
    from abduct._run.write import default_label, model_block

    class Saying:
        def __init__(self, said: object) -> None:
            self.said = said

        def describe_inputs(self) -> object:
            return self.said

    assert input_facts(object()) is None and input_facts(Saying({})) is None
    assert input_facts(Saying({"video": {"frames_per_clip": 8}})) == {"video": {"frames_per_clip": 8}}
    for bad in ([1], {"x": float("nan")}, {"x": object()}):
        with pytest.raises(PluginError, match="model 'm': describe_inputs\\(\\) returned .* not a mapping of JSON"):
            input_facts(Saying(bad), "m")
    assert default_label(Spec.parse("openai:m,base_url=http://127.0.0.1:1/v1,mirrors=https://h/v1,concurrency=2")) \
        == "openai:m,concurrency=2"
    loaded = load_model("random", Settings(), build_registry())
    block = model_block(loaded)
    assert block["label"] == "random" and "inputs" not in block
    assert model_block(loaded, "mine")["label"] == "mine"
