"""The deprecated contract still runs: a third-party task written before the staged contract,
driving the run itself through ``evaluate(run)``, evaluates end to end as one step with a
DeprecationWarning naming it, and gives what the declarative ``tutorial-light`` gives on the
same pictures (the tutorial's task as it was written before, registered here by a plugin of
the test's own)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_tutorial import write_pictures

from abduct import COUNT, Evaluation, Registration, Settings, Spec, Task, VisualInput, hookimpl, percent
from abduct.host import EvalConfig, Registry, build_registry, run_evaluation
from abduct.kit import Choice, accuracy, multiple_choice
from abduct.legacy import LegacyTask, RunContext
from abduct_tutorial.light import CLASSES, LABELS


class LegacyLight:
    """tutorial-light before the staged contract: it reads, limits, scores and counts itself."""

    default_split = "test"
    metric_info = {"accuracy": percent(chance=50.0), "n": COUNT}

    def evaluate(self, run: RunContext) -> Evaluation:
        pictures = run.dataset("tutorial-light").load(run.data_dir, run.split)
        captions = tuple(f"a {label} picture" for label in CLASSES)
        items = [Choice(p["id"], VisualInput(p["image"]), captions, CLASSES.index(p["label"]))
                 for p in run.apply_limit(pictures, "pictures")]
        records = multiple_choice(run, "pictures", items)
        return Evaluation({"accuracy": accuracy(records), "n": len(records)}, records,
                          data_files=[run.data_dir / LABELS])


def make_legacy(spec: Spec, settings: Settings) -> LegacyLight:
    return LegacyLight()


class LegacyPlugin:
    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("legacy-light", "tutorial-light through evaluate(run)", "test_legacy_task:make_legacy")


@pytest.fixture
def registry() -> Registry:
    return build_registry([("legacy", LegacyPlugin())])  # the installed plugins (tutorial-light) and this one


def _run(registry: Registry, task: str, model: str, data: Path, out: Path, limit: int | None) -> dict[str, Any]:
    config = EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True, use_cache=False,
                        limit=limit, seed=5)
    return run_evaluation(config, registry)


def _outputs(out: Path) -> tuple[list[dict[str, Any]], Any]:
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    return sorted(records, key=lambda r: r["id"]), json.loads((out / "units.json").read_text())


def test_the_legacy_task_is_what_the_registry_says(registry: Registry) -> None:
    legacy = registry.create("task", "legacy-light")
    assert isinstance(legacy, LegacyTask) and not isinstance(legacy, Task)
    assert isinstance(registry.create("task", "tutorial-light"), Task)


@pytest.mark.parametrize("model", ["random", "tutorial-brightness,threshold=0.45"])
@pytest.mark.parametrize("limit", [None, 5])
def test_a_legacy_task_runs_with_a_warning_and_gives_the_declarative_results(
        registry: Registry, tmp_path: Path, model: str, limit: int | None) -> None:
    data = write_pictures(tmp_path / "data", count=12)
    with pytest.warns(DeprecationWarning, match=r"task 'legacy-light' defines evaluate\(run\), which is deprecated"):
        legacy = _run(registry, "legacy-light", model, data, tmp_path / "legacy", limit)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the declarative task warns of nothing
        declared = _run(registry, "tutorial-light", model, data, tmp_path / "declared", limit)
    assert legacy["metrics"] == declared["metrics"]
    assert legacy["metrics"]["n"] == (limit or 12)
    assert legacy["data"]["files"] == declared["data"]["files"] == {"labels.json": declared["data"]["files"]["labels.json"]}
    assert _outputs(tmp_path / "legacy") == _outputs(tmp_path / "declared")
    for out in ("legacy", "declared"):
        assert (tmp_path / out / "samples.html").is_file() and not (tmp_path / out / ".partial").exists()


def test_a_legacy_task_resumes_from_its_stored_units(registry: Registry, tmp_path: Path) -> None:
    """Killed on its last model call, the legacy task's rerun resumes: the same records, resumed."""
    from abduct_testing import CallCountingRegistry, Interrupted

    data = write_pictures(tmp_path / "data", count=40)  # three units of 16
    counting = CallCountingRegistry(registry)
    with pytest.warns(DeprecationWarning):
        reference = _run(counting, "legacy-light", "random", data, tmp_path / "ref", None)
    assert counting.calls >= 2
    # the model stops the run on its last call, as a kill would: the units before it are stored
    with pytest.raises(Interrupted), pytest.warns(DeprecationWarning):
        _run(CallCountingRegistry(registry, stop_at=counting.calls), "legacy-light", "random", data,
             tmp_path / "out", None)
    with pytest.warns(DeprecationWarning):
        resumed = _run(registry, "legacy-light", "random", data, tmp_path / "out", None)
    assert resumed["resumed"] is True and resumed["metrics"] == reference["metrics"]
