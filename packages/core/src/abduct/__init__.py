"""abduct: visual abductive reasoning. The core: records, protocols, plugins, engines,
runner, shared task shapes and CLI.

Importing ``abduct`` is cheap and never imports torch.
"""

from abduct.errors import AbductError, DataError, PluginError, UnknownNameError
from abduct.hookspecs import hookimpl
from abduct.protocols import (
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
from abduct.records import Box, GenerationRequest, GroundedText, Region, VisualInput
from abduct.registration import Registration
from abduct.spec import Settings, Spec

__version__ = "0.1.0"

__all__ = [
    "AbductError", "Box", "DataError", "Dataset", "Decoding", "DualEncoder", "GenerationRequest", "Generator",
    "GroundedText", "MatrixScorer", "Metric", "MetricResult", "PairDataset", "PluginError", "Region",
    "Registration", "Scorer", "Settings", "Spec", "TextPool", "UnknownNameError", "VisualInput", "hookimpl",
]
