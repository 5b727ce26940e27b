"""NL-EYE (abductive NLI over images, Ventura et al., ICLR 2025) for abduct."""

from abduct_nleye.loader import load_csv, load_samples
from abduct_nleye.records import CATEGORY_FIELDS, NleyeSample

__all__ = ["CATEGORY_FIELDS", "NleyeSample", "load_csv", "load_samples"]
