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

from abduct._compat import install_old_paths, moved_name
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

__getattr__ = moved_name  # the names abduct exported before, from their new homes with a DeprecationWarning
install_old_paths()
