"""Agreement between raters (Cohen's κ, Krippendorff's α, a confusion table, the judge-agreement
block): re-exported from ``abduct_modelkit.agreement``, its home, which needs nothing heavier than
the core so that abduct-report and dataset packages without torch import it too."""

from __future__ import annotations

from abduct_modelkit.agreement import (
    agreement_summary,
    cohen_kappa,
    confusion,
    judge_agreement,
    krippendorff_alpha,
    undefined_reason,
)

__all__ = [
    "agreement_summary",
    "judge_agreement",
    "cohen_kappa",
    "confusion",
    "krippendorff_alpha",
    "undefined_reason",
]
