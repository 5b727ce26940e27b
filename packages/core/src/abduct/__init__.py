"""abduct: visual abductive reasoning. The core: records, protocols, plugins, runner, CLI.

Importing ``abduct`` is cheap and never imports torch.
"""

from abduct.errors import AbductError, DataError, PluginError, UnknownNameError
from abduct.hookspecs import hookimpl
from abduct.plugins import Registration
from abduct.protocols import (
    Dataset,
    DualEncoder,
    Evaluation,
    Generator,
    MatrixScorer,
    Metric,
    MetricResult,
    Scorer,
    Task,
)
from abduct.records import Box, Region, VisualInput
from abduct.spec import ModelOptions, ModelSpec

__version__ = "0.1.0"

__all__ = [
    "AbductError", "Box", "DataError", "Dataset", "DualEncoder", "Evaluation", "Generator",
    "MatrixScorer", "Metric", "MetricResult", "ModelOptions", "ModelSpec", "PluginError",
    "Region", "Registration", "Scorer", "Task", "UnknownNameError", "VisualInput", "hookimpl",
]
