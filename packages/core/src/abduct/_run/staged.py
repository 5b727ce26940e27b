"""The runner's loop for a task that declares: collect, run, finish.

Collect: build the task's registered dataset with the user's ``--dataset`` options, load the
split's examples, keep those ``--limit`` selects. Run: the task's plan, stage by stage, each
request through the shared shapes and the run's unit store (resume, ranks, progress, timings).
Finish: the task turns the examples and the records into an ``Evaluation``; the runner adds the
dataset's files and keeps the examples by id for the sample views.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from abduct._declare.traits import TaskTraits
from abduct._run.examples import collect_examples
from abduct._run.runner import Run
from abduct._run.shards import Parts, Shard, element_keys, keep
from abduct.contract.errors import PluginError
from abduct.contract.stages import (
    Choose,
    Compare,
    Custom,
    Generate,
    Judge,
    Records,
    Request,
    RunInfo,
    Stage,
)
from abduct.contract.task import Evaluation, Task
from abduct.kit.shapes import compare_two, generate, multiple_choice
from abduct.legacy import LegacyTask

ABILITY_OF = {Choose: "score", Compare: "score", Generate: "generate", Judge: "judge"}

REQUEST_KINDS: tuple[type, ...] = (Choose, Compare, Generate, Judge, Custom)


@dataclass
class Outcome:
    """A finished evaluation, with what the sample page needs to show each record."""

    evaluation: Evaluation
    examples: dict[str, Any]


def needs(request: Request) -> frozenset[str]:
    """The model abilities a request calls: "score", "generate", "judge"."""
    if isinstance(request, Custom):
        return frozenset(request.needs)
    return frozenset({ABILITY_OF[type(request)]})


def collect(task: Task, run: Run) -> tuple[list[Any], list[Any]]:
    """The task's examples and the whole split (``collect_examples`` with the run's dataset
    options and ``--limit``); the run records what the limit counted and the files read."""
    collected = collect_examples(task, run.dataset(task.dataset), run.data_dir, run.split, run.limit)
    run.limit_unit = collected.limit_unit or run.limit_unit
    run.data_files = collected.files
    return collected.examples, collected.corpus


def info(run: Run, corpus: Sequence[Any]) -> RunInfo:
    return RunInfo(split=run.split, model_name=run.model_name, scores=run.scores, generates=run.generates,
                   judged=run.judged, metric=run.metric, settings=run.settings, corpus=corpus)


def execute(run: Run, stage: str, request: Request) -> Parts:
    """One stage's records by element, in order, each unit stored as it finishes: each item's (a
    shared shape's records are one per item) or each custom unit's, keyed by the item's or unit's
    id (what a shard keeps)."""
    if isinstance(request, Custom):
        custom: Custom[Any] = request
        grouped = run.map_unit_records(stage, custom.units, lambda payload: custom.step(run, payload))
        return [(str(uid), records) for (uid, _), records in zip(custom.units, grouped)]
    records = _shape(run, stage, request)
    keys = element_keys(request)
    assert len(keys) == len(records), f"stage '{stage}': {len(records)} records for {len(keys)} items"
    return [(key, [record]) for key, record in zip(keys, records)]


def _shape(run: Run, stage: str, request: Choose | Compare | Generate | Judge) -> Records:
    """A shared shape's records, one per item, in order."""
    if isinstance(request, Choose):
        return multiple_choice(run, stage, request.items, request.per_unit)
    if isinstance(request, Compare):
        return compare_two(run, stage, request.items, request.per_unit)
    if isinstance(request, Generate):
        return generate(run, stage, request.items, request.pool, request.per_unit)
    verdicts = run.require_judge().judge(request.items, request.template, stage=stage, per_unit=request.per_unit,
                                         verdicts=request.answers == "verdict")
    return [{"id": item.id, "equivalent": v.equivalent, "raw": v.raw, "answers": list(v.answers)}
            for item, v in zip(request.items, verdicts)]


def refuse_missing_abilities(stages: Sequence[Stage], run: Run) -> None:
    """Before any stage runs: a model that cannot do what a planned request needs is one line."""
    have = {"score": run.scores, "generate": run.generates, "judge": run.judged}
    for stage in stages:
        if stage.request is None:
            continue
        for ability in sorted(needs(stage.request)):
            if not have.get(ability, True):
                {"score": run.require_scorer, "generate": run.require_generator, "judge": run.require_judge}[ability]()


def run_plan(task: Task, run: Run, examples: Sequence[Any], known: RunInfo, name: str,
             shard: Shard | None = None, parts: dict[str, Parts] | None = None) -> dict[str, Records]:
    """Each stage's records. With ``shard``, each stage keeps only the shard's items (or
    units) before they are batched, and ``parts`` receives each stage's records by element."""
    planned = list(task.plan(examples, known))
    refuse_missing_abilities(planned, run)
    records: dict[str, Records] = {}
    for stage in planned:
        request = stage_request(stage, records, name)
        if shard is not None:
            request = keep(request, shard)
        elements = execute(run, stage.name, request)
        if parts is not None:
            parts[stage.name] = elements
        records[stage.name] = [record for _, part in elements for record in part]
    return records


def stage_request(stage: Stage, records: dict[str, Records], name: str) -> Request:
    """The stage's request (built from the records so far for an ``after=`` stage), checked."""
    if not isinstance(stage, Stage):
        raise PluginError(f"task '{name}': plan() returned {stage!r}; expected Stage records")
    if stage.name in records:
        raise PluginError(f"task '{name}': two stages are named '{stage.name}'")
    request = stage.request if stage.request is not None else stage.after(records)  # type: ignore[misc]
    if not isinstance(request, REQUEST_KINDS):
        raise PluginError(f"task '{name}': stage '{stage.name}' asks {type(request).__name__}; expected one of "
                          + ", ".join(kind.__name__ for kind in REQUEST_KINDS))
    return cast(Request, request)


def example_index(examples: Sequence[Any], traits: TaskTraits) -> dict[str, Any]:
    """The examples by id, for ``view``: the task's ``example_id``, else each example's ``id``."""
    index = {}
    for position, example in enumerate(examples):
        key = traits.example_id(example) if traits.example_id else getattr(example, "id", position)
        index[str(key)] = example
    return index


def deprecated_evaluate(task: object, name: str) -> None:
    """The DeprecationWarning of a legacy task, attributed to the plugin's own ``evaluate`` (so a
    warnings filter on the plugin's module catches it, not one on the runner's)."""
    method = getattr(type(task), "evaluate", None)
    code = getattr(method, "__code__", None)
    module = type(task).__module__
    warnings.warn_explicit(
        f"task '{name}' defines evaluate(run), which is deprecated and goes in abduct 0.3: declare dataset, plan() "
        "and finish() instead (docs/plugins.md)", DeprecationWarning,
        filename=code.co_filename if code is not None else module, lineno=code.co_firstlineno if code is not None else 0,
        module=module, registry=sys.modules[module].__dict__.setdefault("__warningregistry__", {})
        if module in sys.modules else None)


def evaluate_task(task: Task | LegacyTask, run: Run, traits: TaskTraits, name: str) -> Outcome:
    """Evaluate through the task's declarations; a legacy ``evaluate(run)`` task runs as it
    did, with a DeprecationWarning."""
    if not isinstance(task, Task):
        deprecated_evaluate(task, name)
        return Outcome(task.evaluate(run), {})
    examples, corpus = collect(task, run)
    known = info(run, corpus)
    records = run_plan(task, run, examples, known, name)
    return finish_task(task, run, traits, name, examples, records, known)


def finish_task(task: Task, run: Run, traits: TaskTraits, name: str, examples: Sequence[Any],
                records: dict[str, Records], known: RunInfo) -> Outcome:
    """The task's ``finish`` on every stage's records, with the dataset's files and the
    artifacts kept on ``run``; a whole run and ``abduct merge`` both finish through here."""
    evaluation = task.finish(examples, records, known)
    if not isinstance(evaluation, Evaluation):
        raise PluginError(f"task '{name}': finish() returned {type(evaluation).__name__}; expected an Evaluation")
    evaluation.data_files = list(dict.fromkeys([*run.data_files, *evaluation.data_files]))
    for artifact, content in evaluation.artifacts.items():
        run.write_artifact(artifact, content)  # its name checked, written with the outputs
    return Outcome(evaluation, example_index(examples, traits))


def evaluate_shard(task: Task, run: Run, name: str, shard: Shard) -> dict[str, Parts]:
    """Shard ``shard``'s share of every stage, each stage's records by element; no ``finish``
    (``abduct merge`` calls it on every shard's records)."""
    examples, corpus = collect(task, run)
    parts: dict[str, Parts] = {}
    run_plan(task, run, examples, info(run, corpus), name, shard, parts)
    return parts


def sample_view(traits: TaskTraits, examples: Mapping[str, Any]) -> Any:
    """The sample page's hook: a declaring task's ``view`` with the run's examples, or a legacy
    ``sample_view``."""
    if traits.view is not None:
        view = traits.view
        return lambda record: view(record, examples)
    return traits.sample_view
