"""abduct: visual abductive reasoning. The front door of the plugin API.

Everything a plugin or a script needs is importable from here (the contract: records,
protocols, the task contract, specs, metric declarations, errors and hooks; and the registry,
model loading, engines and evaluation), from ``abduct.kit`` (helpers) and from
``abduct.testing`` (contract tests and fixtures). Every other module is private (``_``-prefixed)
and may change without notice. Old import paths (``abduct.errors``, ``abduct.tasks``, ...)
still work for this release, with a DeprecationWarning.

Importing ``abduct`` is cheap and never imports torch: the names of the upper layers are
imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from abduct._compat import install_old_paths
from abduct.contract import (
    COUNT,
    FEATURES,
    TEXT_METRICS,
    AbductError,
    Box,
    Candidate,
    Choice,
    Choose,
    Compare,
    Custom,
    DataError,
    Dataset,
    Decoding,
    DualEncoder,
    Evaluation,
    Generate,
    Generating,
    GenerationItem,
    GenerationRequest,
    Generator,
    GroundedText,
    Judge,
    JudgeItem,
    Judging,
    LegacyTask,
    MatrixScorer,
    Metric,
    MetricInfo,
    MetricResult,
    ModelTraits,
    NonFinite,
    PairDataset,
    PluginError,
    PublishedRow,
    Range,
    Records,
    Region,
    Registration,
    RunContext,
    RunInfo,
    RunModels,
    Scorer,
    Scoring,
    Settings,
    Spec,
    Stage,
    Task,
    TaskTraits,
    TextPool,
    TwoWay,
    UnitScores,
    UnknownNameError,
    VisualInput,
    bind_options,
    check_fields,
    constraints_of,
    higher,
    hookimpl,
    lower,
    model_traits,
    options_of,
    percent,
    reference,
    task_traits,
)

if TYPE_CHECKING:
    from abduct._demo import DemoContext, DemoTable, require_module
    from abduct._engine.generation import GenerationEngine
    from abduct._engine.models import Engines, LoadedModel, engine_for, load_model
    from abduct._engine.scoring import ScoringEngine
    from abduct._outputs.compare import published_rows
    from abduct._registry.pairs import load_pairs
    from abduct._registry.registry import Registry, build_registry, get_registry, reset_registry
    from abduct._run.evaluate import EvalConfig, load_task, run_evaluation
    from abduct._run.examples import Collected, build_dataset, collect_examples

__version__ = "0.1.0"

# Names of the upper layers, imported when first asked for (they pull in the registry, the
# engines and the runner, which a plugin's registration never needs).
_LAZY = {
    "DemoContext": "abduct._demo", "DemoTable": "abduct._demo", "require_module": "abduct._demo",
    "GenerationEngine": "abduct._engine.generation", "ScoringEngine": "abduct._engine.scoring",
    "Engines": "abduct._engine.models", "LoadedModel": "abduct._engine.models",
    "engine_for": "abduct._engine.models", "load_model": "abduct._engine.models",
    "published_rows": "abduct._outputs.compare",
    "load_pairs": "abduct._registry.pairs",
    "Registry": "abduct._registry.registry", "build_registry": "abduct._registry.registry",
    "get_registry": "abduct._registry.registry", "reset_registry": "abduct._registry.registry",
    "EvalConfig": "abduct._run.evaluate", "load_task": "abduct._run.evaluate", "run_evaluation": "abduct._run.evaluate",
    "Collected": "abduct._run.examples", "build_dataset": "abduct._run.examples",
    "collect_examples": "abduct._run.examples",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'abduct' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


install_old_paths()

__all__ = [
    "Candidate", "Choice", "Choose", "Compare", "Custom", "RunModels", "Generate", "GenerationItem", "Judge", "LegacyTask", "Records", "RunInfo", "Stage", "TwoWay",
    "COUNT", "FEATURES", "TEXT_METRICS", "AbductError", "Box", "DataError", "Dataset", "Decoding", "DemoContext",
    "Collected", "build_dataset", "collect_examples",
    "DemoTable", "DualEncoder", "Engines", "EvalConfig", "Evaluation", "GenerationEngine", "GenerationRequest",
    "Generating", "Generator", "GroundedText", "JudgeItem", "Judging", "LoadedModel", "MatrixScorer", "Metric",
    "MetricInfo", "MetricResult", "ModelTraits", "NonFinite", "PairDataset", "PluginError", "PublishedRow", "Range", "Region",
    "Registration", "Registry", "RunContext", "Scorer", "Scoring", "ScoringEngine", "Settings", "Spec", "Task",
    "TaskTraits", "TextPool", "UnitScores", "UnknownNameError", "VisualInput", "bind_options", "build_registry", "check_fields", "constraints_of",
    "engine_for",
    "get_registry", "higher", "hookimpl", "load_model", "load_pairs", "load_task", "lower", "model_traits",
    "options_of", "percent", "published_rows", "reference", "require_module", "reset_registry", "run_evaluation",
    "task_traits",
]
