"""The contract between abduct's core and its plugins: records, protocols, the task contract,
specs and options, metric declarations, errors and hooks. Standard library, numpy and pluggy only;
everything else in abduct stands on it."""

from abduct.contract.errors import AbductError, DataError, PluginError
from abduct.contract.hooks import PublishedRow, Registration, RunPages, hookimpl
from abduct.contract.metric_info import COUNT, TEXT_METRICS, MetricInfo, higher, lower, percent, reference
from abduct.contract.options import NonFinite, Range
from abduct.contract.protocols import (
    Dataset,
    Decoding,
    DualEncoder,
    Generator,
    MatrixScorer,
    Metric,
    MetricResult,
    PairDataset,
    Scorer,
    TextPool,
)
from abduct.contract.records import Box, GenerationRequest, GroundedText, Region, VisualInput
from abduct.contract.spec import Settings, Spec
from abduct.contract.stages import (
    Candidate,
    Choice,
    Choose,
    Chosen,
    Compare,
    Compared,
    Custom,
    Generate,
    Generated,
    Generating,
    GenerationItem,
    Judge,
    Judged,
    JudgeItem,
    Records,
    Request,
    RunInfo,
    RunModels,
    Scoring,
    Stage,
    TwoWay,
)
from abduct.contract.task import Evaluation, ScoreContext, Task
from abduct.contract.units import UnitScores

__all__ = [
    "Candidate", "Choice", "Choose", "Chosen", "Compare", "Compared", "Custom", "RunModels", "Generate",
    "Generated", "GenerationItem", "Judge", "Judged",
    "Records", "Request", "RunInfo", "Stage", "TwoWay",
    "COUNT", "TEXT_METRICS", "AbductError", "Box", "DataError", "Dataset", "Decoding", "DualEncoder",
    "Evaluation", "GenerationRequest", "Generating", "Generator", "GroundedText", "JudgeItem",
    "MatrixScorer", "Metric", "MetricInfo", "MetricResult", "NonFinite", "PairDataset", "PluginError", "PublishedRow", "Range", "Region",
    "Registration", "RunPages", "ScoreContext", "Scorer", "Scoring", "Settings", "Spec", "Task", "TextPool",
    "UnitScores", "VisualInput", "higher", "hookimpl", "lower",
    "percent", "reference",
]
