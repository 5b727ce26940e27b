"""The COCO caption metrics for other packages (abduct-var scores its submissions with them):
the PTB tokenizer as the official kits run it — once per set, its output typed ``PtbTokens`` so
that the scorer never tokenises it again — and the scorer itself.

Importing this module loads pycocoevalcap; import it where the metrics are computed."""

from abduct_metrics._coco import CIDER_FIXED_DF, CocoCaptionMetric, bleu_statistics
from abduct_metrics._ptb import PtbTokens, as_tokens, clean_non_ascii, ptb_tokenize

__all__ = ["CIDER_FIXED_DF", "CocoCaptionMetric", "bleu_statistics", "PtbTokens", "as_tokens", "clean_non_ascii", "ptb_tokenize"]
