"""A declaring task's examples, as a run collects them: its registered dataset built with the
user's options, the split loaded, ``--limit`` applied to what the task says it counts. The
runner, ``abduct check`` and exporters (lmms-eval) read a task's data through here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from abduct._declare.traits import task_traits
from abduct._registry.registry import Registry, get_registry
from abduct.contract.spec import Settings, Spec
from abduct.contract.task import Task


@dataclass(frozen=True)
class Collected:
    """The examples a run evaluates, the whole split they came from, and the files read."""

    examples: list[Any]
    corpus: list[Any]
    files: list[Path] = field(default_factory=list)
    limit_unit: str | None = None  # what --limit counted, when a limit was given


def build_dataset(task: Task, options: Mapping[str, Any] | None = None, registry: Registry | None = None,
                  settings: Settings | None = None) -> Any:
    """The task's registered dataset, built with ``options`` (``--dataset NAME,k=v``)."""
    spec = Spec(task.dataset, options=tuple((options or {}).items()))
    return (registry or get_registry()).create("dataset", spec, settings or Settings())


def collect_examples(task: Task, dataset: Any, data_dir: Path, split: str, limit: int | None = None) -> Collected:
    traits = task_traits(task)
    corpus = list(dataset.load(data_dir, split))
    examples, unit = corpus, None
    if limit is not None:
        unit = traits.limit_unit
        examples = list(traits.select(corpus, limit)) if traits.select else corpus[:limit]
    files = getattr(dataset, "files", None)
    return Collected(examples, corpus, list(files(data_dir, split)) if callable(files) else [], unit)
