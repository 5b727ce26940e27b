"""abduct-metrics: COCO caption metrics, BERTScore and BEM as abduct plugins.

Importing this package is cheap: pycocoevalcap, bert-score, torch and transformers are
imported only when a metric is built (``abduct_metrics._coco``, ``_bertscore``, ``_bem``).
Exact match and the metric input validation come with the core (the ``exact-match``
metric, ``abduct.kit.validate_inputs``); ``abduct metric`` with this package (``abduct_metrics.cli``);
``abduct_metrics.captions`` serves other packages (the tokenizer run once and the scorer).
"""

from abduct_metrics.java import require_java

__all__ = ["require_java"]
