"""The deprecated task contract, kept for one release: a ``LegacyTask`` drives the run itself,
``evaluate(run)`` calling the services of a ``RunContext``. The runner runs one as a single
``Custom`` step with a ``DeprecationWarning``; a task written today declares ``dataset``,
``plan`` and ``finish`` instead (``abduct.Task``), and docs/plugins.md says how to move.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from abduct.contract.protocols import Metric
from abduct.contract.spec import Settings
from abduct.contract.stages import Generating, JudgeItem, Scoring
from abduct.contract.task import Evaluation

__all__ = ["Judging", "LegacyTask", "RunContext", "Verdict"]

T = TypeVar("T")


@dataclass(frozen=True)
class Verdict:
    """``equivalent`` is None when the judge's answer could not be parsed (or was not read as a
    verdict); ``raw`` is its answer, ``answers`` its answer to each prompt."""

    equivalent: bool | None
    raw: str
    answers: tuple[str, ...] = ()


class Judging(Protocol):
    """The ``--judge`` model as ``RunContext.require_judge`` gives it (the run's judge engine):
    ``judge`` returns one verdict per item; ``describe`` is what results.json records of it."""

    def judge(self, items: Sequence[JudgeItem], template: str, *, stage: str, per_unit: int = 16,
              verdicts: bool = True) -> list[Verdict]: ...

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
class LegacyTask(Protocol):
    """Deprecated: a task that drives the run itself through a ``RunContext``."""

    default_split: str

    def evaluate(self, run: RunContext) -> Evaluation:
        """Run the model over ``run.data_dir`` through the run's engines and compute metrics."""
        ...
