"""abduct: visual abductive reasoning. The front door: the contract a plugin author writes against.

``abduct`` exports what a dataset, task, model or metric plugin declares and returns: records,
errors, specs and settings, the hook marker and registrations, the protocols, metric
declarations, and the task contract (``Task``, its stages and request kinds, ``Evaluation``).
The rest of the contract (option constraints, legacy names) is in ``abduct.contract``;
helpers a plugin may call are in ``abduct.kit``; what a program that runs abduct uses (the
registry, ``run_evaluation``, engines, declarations read) is in ``abduct.host``; contract tests and
fixtures in ``abduct_testing``. Every other module is private (``_``-prefixed) and may change
without notice.

Names that ``abduct`` exported before and now live elsewhere (``abduct.run_evaluation``,
``abduct.RunContext``, ...) still import from here for this release, with a DeprecationWarning
naming their new home; so do the old flat module paths (``abduct.errors``, ``abduct.tasks``, ...).

Importing ``abduct`` is cheap and never imports torch.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from abduct._compat import install_old_paths
from abduct.contract import (
    COUNT,
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
    GenerationItem,
    GenerationRequest,
    Generator,
    GroundedText,
    Judge,
    JudgeItem,
    Metric,
    MetricInfo,
    MetricResult,
    PairDataset,
    PluginError,
    PublishedRow,
    Records,
    Region,
    Registration,
    RunInfo,
    RunModels,
    Scorer,
    Settings,
    Spec,
    Stage,
    Task,
    TextPool,
    TwoWay,
    UnitScores,
    VisualInput,
    higher,
    hookimpl,
    lower,
    percent,
)

__version__ = "0.2.0"

__all__ = [
    "COUNT", "TEXT_METRICS", "AbductError", "Box", "Candidate", "Choice", "Choose", "Compare", "Custom", "DataError",
    "Dataset", "Decoding", "DualEncoder", "Evaluation", "Generate", "GenerationItem", "GenerationRequest",
    "Generator", "GroundedText", "Judge", "JudgeItem", "Metric", "MetricInfo", "MetricResult", "PairDataset",
    "PluginError", "PublishedRow", "Records", "Region", "Registration", "RunInfo", "RunModels", "Scorer", "Settings",
    "Spec", "Stage", "Task", "TextPool", "TwoWay", "UnitScores", "VisualInput", "higher", "hookimpl", "lower",
    "percent",
]

# Names abduct exported before the front door narrowed, and where each lives now.
_MOVED = {
    **{name: "abduct.host" for name in (
        "Collected", "Engines", "EvalConfig", "GenerationEngine", "LoadedModel",
        "ModelTraits", "Registry", "ScoringEngine", "TaskTraits", "bind_options", "build_dataset", "build_registry",
        "check_fields", "collect_examples", "constraints_of", "engine_for", "get_registry", "load_model",
        "load_pairs", "load_task", "model_traits", "options_of",
        "reset_registry", "run_evaluation", "task_traits", "UnknownNameError")},
    "published_rows": "abduct_report.comparison",  # abduct-report's
    **{name: "abduct_demo" for name in ("DemoContext", "DemoTable", "require_module")},  # abduct-demo's
    **{name: "abduct.contract" for name in (
        "FEATURES", "Generating", "MatrixScorer", "NonFinite", "Range", "Scoring",
        "reference")},
    **{name: "abduct.legacy" for name in ("Judging", "LegacyTask", "RunContext")},
}


def __getattr__(name: str) -> Any:
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module 'abduct' has no attribute '{name}'")
    warnings.warn(f"abduct.{name} moved to {home}.{name}; import it from there (abduct.{name} goes in 0.3)",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(home), name)


install_old_paths()
