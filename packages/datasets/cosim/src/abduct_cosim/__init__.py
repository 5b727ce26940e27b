"""CoSIm (counterfactual scene imagination, Kim, Zala, Bansal, NAACL 2022) for abduct."""

from abduct_cosim.loader import load_file, load_split
from abduct_cosim.records import CONTEXT_MODES, SEP, CosimRecord

__all__ = ["CONTEXT_MODES", "SEP", "CosimRecord", "load_file", "load_split"]
