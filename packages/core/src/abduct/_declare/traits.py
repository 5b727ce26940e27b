"""The optional attributes of models and tasks, in one place, with their defaults.

The protocols name only the methods every implementation has; what a model or a task may
declare on top is read here and nowhere else, and checked when the registry builds the
component (``Registry.create``), so a wrong declaration is one line naming the component
before any data is read, not a surprise mid-run.

A model may declare:

- ``accepts`` — the input features it can use, from ``FEATURES`` (default ``{"image"}``);
- ``needs`` — features it cannot do without, a subset of ``accepts`` (default none);
- ``fingerprint`` — a non-empty string that changes whenever its outputs may change
  (weights, preprocessing, prompt). Only a model with a fingerprint is cached on disk:
  without one the runner cannot tell two models apart, and says so when it runs;
- ``describe_inputs()`` — a method: what shaped its inputs and who answered, read when the run
  ends and recorded as results.json's ``model.inputs`` (a mapping of JSON values: by convention
  ``image`` — resize rule, sizes; ``video`` — frames per clip, sampling, decode backend; ``served``
  — the server's reported model id and ``system_fingerprint``, endpoints, concurrency). ``abduct
  compare`` flags runs whose ``image`` or ``video`` facts differ. A model without it records nothing.

A task may declare:

- ``default_split`` (required by ``Task``);
- ``optional_inputs`` — features its inputs carry that a model may go without (default none);
- ``input_options`` — ``{feature: "key=value"}``: the task's own option that gives inputs without
  that feature (BlackSwan's ``{"video": "setup=text"}``), which the refusal of a model that cannot
  take the feature names (default none);
- ``needs_answer_key`` — False when its predictions file carries its own references (default True);
- ``metric_info`` — ``{metric or pattern: MetricInfo}`` for the numbers it reports (default none);
- ``view(record, examples)`` — a method: one ``predictions.jsonl`` record and the run's examples
  by id -> what ``samples.html`` shows of it (images with boxes, texts, fields, correct, category;
  see ``abduct_report.samples``), or None for the generic view (default: the generic view for every
  record);
- ``example_id(example)`` — a method: the id by which ``view`` finds an example (default: its ``id``);
- ``limit_unit`` — what ``--limit`` counts (default ``examples``), and ``select(examples, limit)``
  — a method: the examples that the first ``limit`` of those cover (default: the first ``limit``
  examples);
- ``score_files(predictions, answer_key, instance_ids)`` — a method: the official scoring of a
  predictions file in the benchmark's format (default: none; ``abduct score`` says so).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from abduct.contract.errors import PluginError
from abduct.contract.metric_info import MetricInfo
from abduct.contract.protocols import SCORING_PROTOCOLS, DualEncoder, Generator
from abduct.contract.records import FEATURES
from abduct.contract.task import ScoreContext

DEFAULT_ACCEPTS = frozenset({"image"})


def _features(value: object, owner: str, attribute: str) -> frozenset[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise PluginError(f"{owner} declares {attribute} = {value!r}; expected a set of features "
                          f"({', '.join(FEATURES)})")
    features = frozenset(value)
    unknown = sorted(str(f) for f in features - set(FEATURES))
    if unknown:
        raise PluginError(f"{owner} declares unknown {attribute} {unknown} (known: {', '.join(FEATURES)})")
    return features


@dataclass(frozen=True)
class ModelTraits:
    """What the runner knows of a model: its abilities and its declarations."""

    accepts: frozenset[str] = DEFAULT_ACCEPTS
    needs: frozenset[str] = frozenset()
    fingerprint: str | None = None
    scores: bool = False
    generates: bool = False
    dual_encoder: bool = False

    @property
    def abilities(self) -> list[str]:
        return [name for name, able in (("score", self.scores), ("generate", self.generates)) if able]


def model_traits(model: object, name: str = "model") -> ModelTraits:
    """``model``'s traits; PluginError naming the model when a declaration is malformed."""
    owner = f"model '{name}'"
    accepts = _features(getattr(model, "accepts", DEFAULT_ACCEPTS), owner, "accepts")
    needs = _features(getattr(model, "needs", ()), owner, "needs")
    if not needs <= accepts:
        raise PluginError(f"{owner} needs {sorted(needs - accepts)}, which it does not accept")
    fingerprint = getattr(model, "fingerprint", None)
    if fingerprint is not None and (not isinstance(fingerprint, str) or not fingerprint):
        raise PluginError(f"{owner} declares fingerprint = {fingerprint!r}; expected a non-empty string")
    return ModelTraits(accepts, needs, fingerprint, isinstance(model, SCORING_PROTOCOLS),
                       isinstance(model, Generator), isinstance(model, DualEncoder))


def input_facts(model: object, name: str = "model") -> dict[str, Any] | None:
    """``model.describe_inputs()`` (see the module docstring), checked: a mapping of JSON values,
    else PluginError naming the model; None for a model without the method or with nothing to say."""
    method = getattr(model, "describe_inputs", None)
    if method is None:
        return None
    if not callable(method):
        raise PluginError(f"model '{name}' declares describe_inputs = {method!r}; expected a method")
    found = method()
    try:
        if not isinstance(found, Mapping):
            raise TypeError(type(found).__name__)
        facts = json.loads(json.dumps(dict(found), allow_nan=False))  # a copy: later changes stay out
    except (TypeError, ValueError) as exc:
        raise PluginError(f"model '{name}': describe_inputs() returned {str(found)[:80]!r}, not a mapping of "
                          f"JSON values ({exc})") from None
    return facts or None


@dataclass(frozen=True)
class TaskTraits:
    """What the runner and the CLI know of a task beyond its methods."""

    default_split: str
    optional_inputs: frozenset[str] = frozenset()
    needs_answer_key: bool = True
    metric_info: Mapping[str, MetricInfo] = field(default_factory=dict)
    view: Callable[[Mapping[str, Any], Mapping[str, Any]], Mapping[str, Any] | None] | None = None
    example_id: Callable[[Any], str] | None = None
    limit_unit: str = "examples"
    select: Callable[[Sequence[Any], int], Sequence[Any]] | None = None
    score_files: Callable[..., dict[str, Any]] | None = None
    input_options: Mapping[str, str] = field(default_factory=dict)


def _input_options(value: object, owner: str) -> dict[str, str]:
    """``input_options``: known features, each to a ``key=value`` option of the task."""
    if not isinstance(value, Mapping):
        raise PluginError(f"{owner} declares input_options = {value!r}; expected {{feature: 'key=value'}}")
    _features(list(value), owner, "input_options")
    for feature, option in value.items():
        if not isinstance(option, str) or not option.partition("=")[0] or "=" not in option:
            raise PluginError(f"{owner} declares input_options[{feature!r}] = {option!r}; expected the task "
                              "option that gives inputs without it, as key=value")
    return dict(value)


def task_traits(task: object, name: str = "task") -> TaskTraits:
    """``task``'s traits; PluginError naming the task when a declaration is malformed."""
    owner = f"task '{name}'"
    split = getattr(task, "default_split", None)
    if not isinstance(split, str) or not split:
        raise PluginError(f"{owner} declares default_split = {split!r}; expected a split name")
    optional = _features(getattr(task, "optional_inputs", ()), owner, "optional_inputs")
    needs_key: Any = getattr(task, "needs_answer_key", True)
    if not isinstance(needs_key, bool):
        raise PluginError(f"{owner} declares needs_answer_key = {needs_key!r}; expected True or False")
    info: Any = getattr(task, "metric_info", None) or {}
    if not isinstance(info, Mapping) or not all(isinstance(v, MetricInfo) for v in info.values()):
        raise PluginError(f"{owner} declares a metric_info that is not a mapping of MetricInfo")
    methods = {}
    for attribute in ("view", "example_id", "select", "score_files"):
        method = getattr(task, attribute, None)
        if method is not None and not callable(method):
            raise PluginError(f"{owner} declares {attribute} = {method!r}; expected a method")
        methods[attribute] = method
    limit_unit = getattr(task, "limit_unit", "examples")
    if not isinstance(limit_unit, str) or not limit_unit:
        raise PluginError(f"{owner} declares limit_unit = {limit_unit!r}; expected a name (chunks, images...)")
    options = _input_options(getattr(task, "input_options", None) or {}, owner)
    return TaskTraits(split, optional, needs_key, dict(info), limit_unit=limit_unit, input_options=options, **methods)


def score_files(traits: TaskTraits, predictions: Path, answer_key: Path | None, instance_ids: Path | None,
                context: ScoreContext) -> dict[str, Any]:
    """The task's official scoring of a predictions file, given ``context`` where its
    ``score_files`` declares that keyword (a task written before it had none still works)."""
    method = traits.score_files
    assert method is not None
    if "context" in inspect.signature(method).parameters:
        return method(predictions, answer_key, instance_ids, context=context)
    return method(predictions, answer_key, instance_ids)
