"""What a task asks of the run, as data: stages of typed requests.

A task's ``plan(examples, run)`` returns named ``Stage``s. Each holds one request kind: the
items of a shared shape (``Choose``, ``Compare``, ``Generate``, ``Judge``) or a ``Custom``
step for work that is none of them (a score matrix, region boxes, a second model). The runner
executes them in order, unit by unit through its store (so a killed run resumes), and hands
every stage's records to the task's ``finish``. A stage that depends on an earlier one's
records gives a function of the records so far instead of a request (NL-EYE's captions, then
scores; WHOOPS!'s explanations, then the judge's verdicts).

Each shared request kind's records reach ``after=`` functions and ``finish`` as its typed
results, one per item, in the items' order: ``Chosen`` for ``Choose``, ``Compared`` for
``Compare``, ``Generated`` for ``Generate``, ``Judged`` for ``Judge``. A ``Custom`` step's
records are what its function returns for each unit: JSON-able dicts, kept as they are.
``Evaluation.predictions`` (the lines of ``predictions.jsonl``) may hold typed records: they are
written as their fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

import numpy as np

from abduct.contract.protocols import Metric, TextPool
from abduct.contract.records import GenerationRequest, VisualInput
from abduct.contract.spec import Settings

T = TypeVar("T")
Records = list[Any]  # a stage's records: typed results (Chosen, Compared, Generated, Judged), or a Custom step's dicts


# -- the items of the shared shapes ---------------------------------------------------------------
@dataclass(frozen=True)
class Choice:
    """One multiple-choice item: candidates scored given ``visual``; ``label`` the gold index."""

    id: str
    visual: VisualInput
    candidates: tuple[str, ...]
    label: int | None = None


@dataclass(frozen=True)
class Candidate:
    visual: VisualInput
    text: str = ""


@dataclass(frozen=True)
class TwoWay:
    """Which of two candidates is more plausible; ``gold`` is 0 or 1."""

    id: str
    first: Candidate
    second: Candidate
    gold: int


@dataclass(frozen=True)
class GenerationItem:
    """One text to generate; ``references`` travel into its record for the metrics."""

    id: str
    request: GenerationRequest
    references: tuple[str, ...] = ()


@dataclass(frozen=True)
class JudgeItem:
    """One judgment: is ``candidate`` equivalent to any of ``references``? ``visual`` and
    ``question`` are given to judges that can take them."""

    id: str
    candidate: str
    references: tuple[str, ...]
    visual: VisualInput | None = None
    question: str | None = None


# -- what the shared requests give back, one per item ---------------------------------------------
@dataclass(frozen=True)
class Chosen:
    """A ``Choice`` scored: each candidate's score, the first maximal index chosen, and whether
    it is the gold ``label`` (None without one)."""

    id: str
    scores: list[float]
    choice: int
    label: int | None
    correct: bool | None


@dataclass(frozen=True)
class Compared:
    """A ``TwoWay`` scored: ``(first, second)``; correct only when the gold scores strictly higher."""

    id: str
    scores: list[float]  # [first, second]
    gold: int
    correct: bool


@dataclass(frozen=True)
class Generated:
    """A ``GenerationItem``'s text, with the item's references (for the metrics). ``prediction``
    is the answer; from a model with ``reasoning=``, an ``abduct.kit.reasoning.Reply`` (a str)
    that also carries the reasoning split off it and whether that reasoning finished."""

    id: str
    prediction: str
    references: list[str]


@dataclass(frozen=True)
class Judged:
    """The judge on a ``JudgeItem``: ``equivalent`` is None when its answer did not parse (or,
    with ``answers="text"``, was not read as a verdict); ``raw`` its answer, ``answers`` its
    answer to each prompt (one per reference with a ``{reference}`` template)."""

    id: str
    equivalent: bool | None
    raw: str
    answers: list[str]


# -- what a custom step may call ------------------------------------------------------------------
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


class RunModels(Protocol):
    """What a ``Custom`` step receives: the run's models (each ``require_*`` is a one-line error
    when the model cannot do it), its settings, a cache folder and a progress bar for long work
    inside one unit."""

    settings: Settings
    cache_dir: Path | None  # where a step may keep files across runs (pictures); None under --no-cache

    def require_scorer(self) -> Scoring: ...

    def require_generator(self) -> Generating: ...

    # another generating model (NL-EYE's captioner) with the run's settings and caches; role names it in errors
    def generator_for(self, spec: str, role: str = "model") -> Generating: ...

    # items, with a progress bar as the run shows its stages (none when the run is quiet)
    def progress(self, items: Iterable[T], desc: str, total: int | None = None) -> Iterator[T]: ...


# -- the request kinds ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Choose:
    """Score each item's candidates given its visual input; pick the argmax."""

    items: Sequence[Choice]
    per_unit: int = 16


@dataclass(frozen=True)
class Compare:
    """Score both candidates of each item; the gold wins only when strictly higher."""

    items: Sequence[TwoWay]
    per_unit: int = 32


@dataclass(frozen=True)
class Generate:
    """Generate one text per item; ``pool`` is what a retrieving model may pick from."""

    items: Sequence[GenerationItem]
    pool: TextPool | None = None
    per_unit: int = 64


@dataclass(frozen=True)
class Judge:
    """Ask the ``--judge`` model whether each candidate is equivalent to a reference;
    ``template`` is the judge's prompt with ``{candidate}``, ``{references}`` (or ``{reference}``:
    one prompt per reference), ``{question}``; with neither references placeholder, the judge
    answers from the question and candidate alone (reference-free). ``answers="text"``: the judge
    answers in its own terms (a rating), which the task reads; no yes/no verdict is parsed or
    counted."""

    items: Sequence[JudgeItem]
    template: str
    per_unit: int = 16
    answers: Literal["verdict", "text"] = "verdict"


@dataclass(frozen=True)
class Custom(Generic[T]):
    """Work that is none of the shapes: ``step(models, payload)`` returns each unit's records
    (JSON-able dicts; ``models``: the ``RunModels`` it calls). ``needs`` says which abilities of the model it calls ("score", "generate"), so a run is
    refused before it starts and an exporter knows what it cannot export."""

    units: Sequence[tuple[str, T]]
    step: Callable[[RunModels, T], list[dict[str, Any]]]
    needs: frozenset[str] = field(default_factory=frozenset)


Request = Choose | Compare | Generate | Judge | Custom[Any]


@dataclass(frozen=True)
class Stage:
    """A named step of a plan: a request, or ``after(records so far) -> request`` when it
    depends on what earlier stages returned (their records, by stage name)."""

    name: str
    request: Request | None = None
    after: Callable[[Mapping[str, Records]], Request] | None = None

    def __post_init__(self) -> None:
        if (self.request is None) == (self.after is None):
            raise ValueError(f"stage '{self.name}' needs a request or an after= function, not both")


# -- what a task knows of the run -----------------------------------------------------------------
@dataclass(frozen=True)
class RunInfo:
    """What ``plan`` and ``finish`` may know of the run: the split, what the model can do, the
    run's metrics (``metric(name, **options)`` builds one with the run's settings) and the whole
    split as loaded (``corpus``: the examples before ``--limit``, for what a task draws from the
    split rather than from the examples it evaluates, such as a pool of texts to pick from)."""

    split: str
    model_name: str
    scores: bool
    generates: bool
    judged: bool
    metric: Callable[..., Metric]
    settings: Settings = field(default_factory=Settings)
    corpus: Sequence[Any] = ()
