"""abduct: visual abductive reasoning. The front door: the contract a plugin author writes against.

``abduct`` exports what a dataset, task, model or metric plugin declares and returns: records,
errors, specs, settings and option limits, the hook marker and registrations, the protocols,
metric declarations, and the task contract (``Task``, its stages and request kinds,
``Evaluation``). The rest of the contract (what only a host or a test kit reads) is in
``abduct.contract``; helpers a plugin may call are in ``abduct.kit``; what a program that runs
abduct uses (the registry, ``run_evaluation``, engines, declarations read) is in ``abduct.host``;
contract tests and fixtures in ``abduct_testing``. Every other module is private
(``_``-prefixed) and may change without notice.

Importing ``abduct`` is cheap and never imports torch.
"""

from __future__ import annotations

from abduct.contract import (
    COUNT,
    TEXT_METRICS,
    AbductError,
    Box,
    Candidate,
    Choice,
    Choose,
    Chosen,
    Compare,
    Compared,
    Custom,
    DataError,
    Dataset,
    Decoding,
    DualEncoder,
    Evaluation,
    Generate,
    Generated,
    Generating,
    GenerationItem,
    GenerationRequest,
    Generator,
    GroundedText,
    Judge,
    Judged,
    JudgeItem,
    Metric,
    MetricInfo,
    MetricResult,
    NonFinite,
    PairDataset,
    PluginError,
    PublishedRow,
    Range,
    Records,
    Region,
    Registration,
    Request,
    RunInfo,
    RunModels,
    ScoreContext,
    Scorer,
    Scoring,
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
    reference,
)

__version__ = "0.2.0"

__all__ = [
    "AbductError", "Box", "COUNT", "Candidate", "Choice", "Choose", "Chosen", "Compare", "Compared", "Custom",
    "DataError", "Dataset", "Decoding", "DualEncoder", "Evaluation", "Generate", "Generated", "Generating",
    "GenerationItem", "GenerationRequest",
    "Generator", "GroundedText", "Judge", "Judged", "JudgeItem", "Metric", "MetricInfo", "MetricResult", "NonFinite",
    "PairDataset", "PluginError", "PublishedRow", "Range", "Records", "Region", "Registration", "Request",
    "RunInfo", "RunModels", "ScoreContext", "Scorer", "Scoring", "Settings", "Spec", "Stage", "TEXT_METRICS",
    "Task", "TextPool", "TwoWay", "UnitScores", "VisualInput", "higher", "hookimpl", "lower", "percent", "reference",
]
