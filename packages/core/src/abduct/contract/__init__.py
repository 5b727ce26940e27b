"""The contract between abduct's core and its plugins: records, protocols, the task contract,
specs and options, metric declarations, errors and hooks. Standard library, numpy and pluggy only;
everything else in abduct stands on it."""

from abduct.contract.errors import AbductError, DataError, PluginError
from abduct.contract.hooks import PLUGIN_API, SUPPORTED_PLUGIN_APIS, PublishedRow, Registration, RunPages, hookimpl
from abduct.contract.metric_info import COUNT, TEXT_METRICS, MetricInfo, higher, lower, percent, reference
from abduct.contract.options import NonFinite, Range, check_fields, constraints_of
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
from abduct.contract.records import FEATURES, Box, GenerationRequest, GroundedText, Region, VisualInput
from abduct.contract.spec import Settings, Spec
from abduct.contract.stages import (
    Candidate,
    Choice,
    Choose,
    Compare,
    Custom,
    Generate,
    Generating,
    GenerationItem,
    Judge,
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
    "Candidate", "Choice", "Choose", "Compare", "Custom", "RunModels", "Generate", "GenerationItem", "Judge",
    "Records", "Request", "RunInfo", "Stage", "TwoWay",
    "COUNT", "FEATURES", "TEXT_METRICS", "AbductError", "Box", "DataError", "Dataset", "Decoding", "DualEncoder",
    "Evaluation", "GenerationRequest", "Generating", "Generator", "GroundedText", "JudgeItem",
    "MatrixScorer", "Metric", "MetricInfo", "MetricResult", "NonFinite", "PairDataset", "PluginError", "PublishedRow", "Range", "Region",
    "Registration", "RunPages", "ScoreContext", "Scorer", "Scoring", "Settings", "Spec", "Task", "TextPool",
    "UnitScores", "VisualInput", "check_fields", "constraints_of", "higher", "hookimpl", "lower",
    "percent", "reference", "PLUGIN_API", "SUPPORTED_PLUGIN_APIS",
]
