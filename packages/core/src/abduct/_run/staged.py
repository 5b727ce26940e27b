"""The runner's loop for a task that declares: collect, run, finish.

Collect: build the task's registered dataset with the user's ``--dataset`` options, load the
split's examples, keep those ``--limit`` selects. Run: the task's plan, stage by stage, each
request through the shared shapes and the run's unit store (resume, ranks, progress, timings).
Finish: the task turns the examples and the records into an ``Evaluation``; the runner adds the
dataset's files and keeps the examples by id for the sample views.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from abduct._declare.traits import TaskTraits
from abduct._registry.contain import plugin_call
from abduct._registry.registry import get_registry
from abduct._run.collect import Prepared
from abduct._run.requests import answer, typed
from abduct._run.runner import Run
from abduct._run.shards import Parts, Shard
from abduct.contract.errors import AbductError, PluginError
from abduct.contract.spec import Settings
from abduct.contract.stages import (
    Choose,
    Compare,
    Custom,
    Generate,
    Generated,
    Generating,
    Judge,
    Records,
    Request,
    RunInfo,
    Scoring,
    Stage,
)
from abduct.contract.task import Evaluation, Task
from abduct.kit.progress_bars import progress
from abduct.kit.reasoning import reasoning_fields

T = TypeVar("T")

ABILITY_OF = {Choose: "score", Compare: "score", Generate: "generate", Judge: "judge"}

REQUEST_KINDS: tuple[type, ...] = (Choose, Compare, Generate, Judge, Custom)


@dataclass
class Outcome:
    """A finished evaluation, with what the sample page needs to show each record."""

    evaluation: Evaluation
    examples: dict[str, Any]
    view: Any = None  # the sample page's view of one record, or None for the generic view


@dataclass
class StepModels:
    """What a ``Custom`` step receives (``RunModels``): the run's models, settings and cache
    folder, and progress bars that follow the run's ``--quiet`` (and show on rank 0 only)."""

    settings: Settings
    cache_dir: Path | None
    require_scorer: Callable[[], Scoring]
    require_generator: Callable[[], Generating]
    generator_for: Callable[..., Generating]
    quiet: bool = False

    @classmethod
    def of(cls, run: Run) -> StepModels:
        return cls(run.settings, run.cache_dir, run.require_scorer, run.require_generator, run.generator_for,
                   run.quiet or not run.ranks.is_main)

    def progress(self, items: Iterable[T], desc: str, total: int | None = None) -> Iterator[T]:
        return progress(items, desc=desc, total=total, quiet=self.quiet)


def needs(request: Request) -> frozenset[str]:
    """The model abilities a request calls: "score", "generate", "judge"."""
    if isinstance(request, Custom):
        return frozenset(request.needs)
    return frozenset({ABILITY_OF[type(request)]})


def element_keys(request: Request) -> list[str]:
    """What a request is made of, as the shards split it: its items' ids, or a custom step's unit ids."""
    if isinstance(request, Custom):
        return [str(uid) for uid, _ in request.units]
    return [str(item.id) for item in request.items]


def keep(request: Request, shard: Shard) -> Request:
    """The part of ``request`` that ``shard`` evaluates, in the request's order."""
    if isinstance(request, Custom):
        return dataclasses.replace(request, units=[unit for unit in request.units if shard.owns(str(unit[0]))])
    return dataclasses.replace(request, items=[item for item in request.items  # type: ignore[arg-type]
                                               if shard.owns(str(item.id))])


def execute(run: Run, stage: str, request: Request) -> Parts:
    """One stage's records by element, in order, each unit stored as it finishes: each item's (a
    shared shape's records are one per item) or each custom unit's, keyed by the item's or unit's
    id (what a shard keeps)."""
    if isinstance(request, Custom):
        custom: Custom[Any] = request
        models = StepModels.of(run)
        grouped = run.map_unit_records(stage, custom.units, lambda payload: custom.step(models, payload))
        return [(str(uid), records) for (uid, _), records in zip(custom.units, grouped)]
    records = answer(run, stage, request)
    keys = element_keys(request)
    assert len(keys) == len(records), f"stage '{stage}': {len(records)} records for {len(keys)} items"
    return [(key, [record]) for key, record in zip(keys, records)]


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
    """Each stage's records, typed as its request's results. With ``shard``, each stage keeps only
    the shard's items (or units) before they are batched, and ``parts`` receives each stage's
    records by element, as stored."""
    planned = planned_stages(task, run, examples, known, name)
    refuse_missing_abilities(planned, run)
    records: dict[str, Records] = {}
    who = task_who(run, name)
    for stage in planned:
        request = stage_request(stage, records, name, who)
        if shard is not None:
            request = keep(request, shard)
        elements = execute(run, stage.name, request)
        if parts is not None:
            parts[stage.name] = elements
        records[stage.name] = typed(request, [record for _, part in elements for record in part])
    return records


def task_who(run: Run, name: str) -> str:
    """The task as its faults name it: ``task 'name' (plugin 'p')``."""
    try:
        plugin = (run.registry or get_registry()).get("task", name).plugin
    except AbductError:  # built outside the registry (a host's own task)
        return f"task '{name}'"
    return f"task '{name}' (plugin '{plugin}')"


def planned_stages(task: Task, run: Run, examples: Sequence[Any], known: RunInfo, name: str) -> list[Stage]:
    """The task's plan, checked before any stage runs: a list of ``Stage`` records whose requests
    are of the known kinds; what ``plan`` raises or returns otherwise is one line naming the task."""
    who = task_who(run, name)
    returned: Any = plugin_call(who, "plan()", lambda: task.plan(examples, known))
    if returned is None or isinstance(returned, (str, bytes, Mapping)) or not isinstance(returned, Iterable):
        raise PluginError(f"{who}: plan() returned {type(returned).__name__}; expected a list of Stage records")
    planned = plugin_call(who, "plan()", lambda: list(returned))  # a generator's body runs here
    for stage in planned:
        if not isinstance(stage, Stage):
            raise PluginError(f"{who}: plan() returned {type(stage).__name__} {_short(stage)} among its stages; "
                              "expected Stage records")
        if stage.request is not None:
            _known_request(stage.request, stage.name, who)
    return planned


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _known_request(request: object, stage: str, who: str) -> Request:
    if not isinstance(request, REQUEST_KINDS):
        raise PluginError(f"{who}: stage '{stage}' asks {type(request).__name__}; expected one of "
                          + ", ".join(kind.__name__ for kind in REQUEST_KINDS))
    return cast(Request, request)


def stage_request(stage: Stage, records: dict[str, Records], name: str, who: str | None = None) -> Request:
    """The stage's request (built from the records so far for an ``after=`` stage), checked."""
    who = who or f"task '{name}'"
    if not isinstance(stage, Stage):
        raise PluginError(f"{who}: plan() returned {_short(stage)}; expected Stage records")
    if stage.name in records:
        raise PluginError(f"{who}: two stages are named '{stage.name}'")
    after = stage.after
    request = stage.request if stage.request is not None else plugin_call(
        who, f"stage '{stage.name}' after=", lambda: after(records))  # type: ignore[misc]
    return _known_request(request, stage.name, who)


def example_index(examples: Sequence[Any], traits: TaskTraits) -> dict[str, Any]:
    """The examples by id, for ``view``: the task's ``example_id``, else each example's ``id``."""
    index = {}
    for position, example in enumerate(examples):
        key = traits.example_id(example) if traits.example_id else getattr(example, "id", position)
        index[str(key)] = example
    return index


def evaluate_task(prepared: Prepared, run: Run, known: RunInfo, examples: list[Any]) -> Outcome:
    """Evaluate through the task's declarations: collect, run the plan, finish."""
    task, name = prepared.task, prepared.spec.name
    records = run_plan(task, run, examples, known, name)
    return finish_task(task, run, prepared.traits, name, examples, records, known)


def finish_task(task: Task, run: Run, traits: TaskTraits, name: str, examples: Sequence[Any],
                records: dict[str, Records], known: RunInfo) -> Outcome:
    """The task's ``finish`` on every stage's records, with the dataset's files and the
    artifacts kept on ``run``; a whole run and ``abduct merge`` both finish through here."""
    who = task_who(run, name)
    evaluation = plugin_call(who, "finish()", lambda: task.finish(examples, records, known))
    if not isinstance(evaluation, Evaluation):
        raise PluginError(f"{who}: finish() returned {type(evaluation).__name__}; expected an Evaluation")
    evaluation.predictions = with_reasoning([as_line(record) for record in evaluation.predictions], records)
    evaluation.data_files = list(dict.fromkeys([*run.data_files, *evaluation.data_files]))
    for artifact, content in evaluation.artifacts.items():
        run.write_artifact(artifact, content)  # its name checked, written with the outputs
    index = example_index(examples, traits)
    return Outcome(evaluation, index, sample_view(traits, index))


def as_line(record: Any) -> Any:
    """A prediction line: a typed record (``Chosen``, ...) as its fields; any other as it is."""
    return dataclasses.asdict(record) if dataclasses.is_dataclass(record) and not isinstance(record, type) else record


def with_reasoning(lines: list[Any], records: Mapping[str, Records]) -> list[Any]:
    """Each prediction line (a dict with an ``id``) given the reasoning its generated record
    carries, unless the task wrote one itself: kept per sample without every task copying it."""
    found = {str(r.id): r.prediction for stage in records.values() for r in stage
             if isinstance(r, Generated) and reasoning_fields(r.prediction)}
    if not found:
        return lines
    for line in lines:
        answer = found.get(str(line.get("id"))) if isinstance(line, dict) else None
        if answer is not None and "reasoning" not in line:
            line.update(reasoning_fields(answer))
    return lines


def evaluate_shard(prepared: Prepared, run: Run, known: RunInfo, examples: list[Any], shard: Shard
                   ) -> dict[str, Parts]:
    """Shard ``shard``'s share of every stage, each stage's records by element; no ``finish``
    (``abduct merge`` calls it on every shard's records)."""
    parts: dict[str, Parts] = {}
    run_plan(prepared.task, run, examples, known, prepared.spec.name, shard, parts)
    return parts


def sample_view(traits: TaskTraits, examples: Mapping[str, Any]) -> Any:
    """The sample page's hook: the task's ``view`` with the run's examples (None: the generic view)."""
    if traits.view is None:
        return None
    view = traits.view
    return lambda record: view(record, examples)
