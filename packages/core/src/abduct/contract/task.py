"""What a task is: the contract between a task and the runner.

A task declares; the runner drives. ``Task`` names the registered ``dataset`` it reads (the
runner builds it with the user's ``--dataset`` options and loads the examples), plans the
run as stages of requests (``abduct.contract.stages``) and finishes it: ``finish`` turns the
examples and every stage's records into an ``Evaluation``. It keeps no state between calls
and writes no files: loading, ``--limit``, resume, ranks, shards and progress are the runner's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from abduct.contract.metric_info import MetricInfo
from abduct.contract.protocols import Metric
from abduct.contract.spec import Settings
from abduct.contract.stages import Records, RunInfo, Stage
from abduct.contract.units import UnitScores

T = TypeVar("T")


@dataclass
class Evaluation:
    """What a task's evaluation produced.

    ``predictions`` are JSON-able per-sample records; ``data_files`` are hashed into
    results.json; ``details`` holds anything else worth keeping (e.g. per-chunk values);
    ``metric_info`` declares metrics that depend on what ran, over the task's own
    ``metric_info`` (see ``abduct.contract.metric_info``); ``units`` the per-unit data of the metrics
    that have it (``UnitScores``), from which results.json gets their confidence intervals and
    ``abduct compare`` its paired tests.
    """

    metrics: dict[str, Any]
    predictions: list[dict[str, Any]]
    data_files: list[Path] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    metric_info: dict[str, MetricInfo] = field(default_factory=dict)
    units: dict[str, UnitScores] = field(default_factory=dict)
    artifacts: dict[str, Any] = field(default_factory=dict)  # files beside the outputs (VAR's submission.json)


@dataclass(frozen=True)
class ScoreContext:
    """What ``abduct score`` gives a task's ``score_files`` that declares a ``context`` keyword:
    the settings, and ``metric(name, **options)``, a metric built by the registry running the
    command (so a test's or a host's registry is the one used, not the process's)."""

    settings: Settings
    metric: Callable[..., Metric]


@runtime_checkable
class Task(Protocol):
    """A benchmark's evaluation protocol over the examples of a registered dataset.

    Besides ``dataset``, ``plan`` and ``finish`` a task may declare (read by
    ``abduct.host.task_traits``): ``optional_inputs``, ``input_options``, ``needs_answer_key``, ``metric_info``,
    ``limit_unit`` and ``select(examples, limit)`` (what ``--limit`` counts, when not examples),
    ``example_id(example)`` (default ``example.id``), ``view(record, examples)`` for samples.html,
    and ``score_files(predictions, answer_key, instance_ids)`` for the benchmark's official
    predictions format (given ``context=ScoreContext`` too when it declares that keyword)."""

    default_split: str
    dataset: str  # the registered dataset whose examples the runner loads for it

    def plan(self, examples: Sequence[Any], run: RunInfo) -> Sequence[Stage]:
        """The stages of requests that evaluate ``examples``, in order."""
        ...

    def finish(self, examples: Sequence[Any], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        """Metrics, per-sample predictions, units and artifacts from every stage's records."""
        ...
