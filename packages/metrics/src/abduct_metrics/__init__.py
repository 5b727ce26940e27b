"""abduct-metrics: COCO caption metrics, BERTScore, BEM and exact match as abduct plugins.

Importing this package is cheap: pycocoevalcap, bert-score, torch and transformers are
imported only when a metric is built (``abduct_metrics._coco``, ``_bertscore``, ``_bem``).
"""

from abduct_metrics.exact_match import ExactMatch, exact_match, normalize_answer
from abduct_metrics.inputs import load_inputs, validate_inputs
from abduct_metrics.java import require_java

__all__ = ["ExactMatch", "exact_match", "load_inputs", "normalize_answer", "require_java", "validate_inputs"]
