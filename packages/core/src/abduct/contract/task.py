"""What a task is, and what it gets to run a model: the contract between a task and the runner.

A task (``Task``) receives a ``RunContext``: where the data is, the run's settings, the
run's engines (``Scoring``, ``Generating``, ``Judging``) through which it calls the model,
the metrics, and ``map_units``, which stores each finished unit so a killed run resumes. It
returns an ``Evaluation``. The runner's ``Run`` implements ``RunContext``; a task never
needs to know more of it than this page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from abduct.contract.metric_info import MetricInfo
from abduct.contract.protocols import Metric, TextPool
from abduct.contract.records import GenerationRequest, VisualInput
from abduct.contract.spec import Settings
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


@dataclass(frozen=True)
class JudgeItem:
    """One judgment: is ``candidate`` equivalent to any of ``references``? ``visual`` and
    ``question`` are given to judges that can take them."""

    id: str
    candidate: str
    references: tuple[str, ...]
    visual: VisualInput | None = None
    question: str | None = None


@dataclass(frozen=True)
class Verdict:
    """``equivalent`` is None when the judge's answer could not be parsed; ``raw`` is its answer."""

    equivalent: bool | None
    raw: str


class Scoring(Protocol):
    """How a task scores: every path of the model (pairs, a matrix, dual-encoder embeddings)
    behind one interface that batches, deduplicates and caches."""

    @property
    def is_dual_encoder(self) -> bool: ...

    def score_pairs(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray: ...

    def score_rows(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        """Like ``score_pairs``, as one matrix when the rows cover most of their grid."""
        ...

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray: ...

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray: ...

    def encode_text(self, texts: Sequence[str]) -> np.ndarray: ...


class Generating(Protocol):
    """How a task generates: one text per request, identical requests generated once."""

    def generate(self, requests: Sequence[GenerationRequest], pool: TextPool | None = None) -> list[str]: ...


class Judging(Protocol):
    """The ``--judge`` model: ``judge`` returns one verdict per item; ``describe`` is what
    results.json records of it."""

    def judge(self, items: Sequence[JudgeItem], template: str, *, stage: str, per_unit: int = 16
              ) -> list[Verdict]: ...

    def describe(self) -> dict[str, Any]: ...


@runtime_checkable
class RunContext(Protocol):
    """What a task's ``evaluate`` may use of the run (``abduct._run.runner.Run`` implements it)."""

    data_dir: Path
    split: str
    settings: Settings
    model_name: str
    limit: int | None
    quiet: bool
    cache_dir: Path | None  # where the run may keep files across runs (a task's pictures); None under --no-cache

    @property
    def scores(self) -> bool:
        """The model scores (``require_scorer`` will succeed)."""
        ...

    @property
    def generates(self) -> bool:
        """The model generates (``require_generator`` will succeed)."""
        ...

    @property
    def judged(self) -> bool:
        """A ``--judge`` model was given."""
        ...

    def require_scorer(self) -> Scoring: ...

    def require_generator(self) -> Generating: ...

    def require_judge(self) -> Judging: ...

    def generator_for(self, spec: str, role: str = "model") -> Generating:
        """Another generating model of this run (e.g. NL-EYE's captioner), with the run's
        settings and caches; ``role`` names it in errors."""
        ...

    def dataset(self, name: str) -> Any:
        """The dataset ``name`` built with the options the user gave it (``--dataset``)."""
        ...

    def metric(self, name: str, **options: Any) -> Metric: ...

    def progress(self, iterable: Iterable[T], desc: str, total: int | None = None) -> Iterator[T]: ...

    def apply_limit(self, items: Sequence[T], unit: str = "items") -> Sequence[T]: ...

    def map_units(self, stage: str, units: Sequence[tuple[str, T]],
                  fn: Callable[[T], list[dict[str, Any]]]) -> list[dict[str, Any]]: ...

    def write_artifact(self, name: str, content: Any) -> None:
        """A file the benchmark wants beside the run's outputs (e.g. VAR's ``submission.json``):
        JSON-able content, or bytes. Written with the results, by the main process only, and only
        when the run finishes."""
        ...


@runtime_checkable
class Task(Protocol):
    """A dataset split plus an evaluation protocol.

    A task may also set ``optional_inputs`` (see ``abduct.contract.traits``): the input features a
    model may go without on this benchmark; ``needs_answer_key = False`` when its predictions
    file carries its own references (``abduct score`` then takes no answer key); and it declares
    ``metric_info`` (see ``abduct.contract.metric_info``): for each metric it reports, which way is better,
    its range and its chance level."""

    default_split: str

    def evaluate(self, run: RunContext) -> Evaluation:
        """Run the model over ``run.data_dir`` through the run's engines and compute metrics."""
        ...

    def score_files(
        self, predictions: Path, answer_key: Path | None, instance_ids: Path | None = None
    ) -> dict[str, Any]:
        """Score a predictions file in the benchmark's official format; ``answer_key`` is None
        only for tasks that set ``needs_answer_key = False``."""
        ...


