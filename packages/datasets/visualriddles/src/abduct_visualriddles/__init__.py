"""Visual Riddles (Bitton-Guetta et al., NeurIPS 2024 Datasets & Benchmarks) for abduct."""

from abduct_visualriddles.layout import COLUMNS, Layout, LayoutError
from abduct_visualriddles.records import Riddle, load_riddles

__all__ = ["COLUMNS", "Layout", "LayoutError", "Riddle", "load_riddles"]
