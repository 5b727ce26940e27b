"""VAR (Visual Abductive Reasoning, Liang et al., CVPR 2022) for abduct.

Importing this package is cheap: no torch, no video decoding; those load on first use.
"""

from abduct_var.records import VarEvent, VarExample

__all__ = ["VarEvent", "VarExample"]
__version__ = "0.2.0"
