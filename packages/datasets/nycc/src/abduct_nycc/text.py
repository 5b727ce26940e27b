"""The explanation metrics exactly as ``eval_crossval.py`` gets them from Hugging Face ``evaluate``,
computed with the libraries ``evaluate``'s two metric scripts wrap (``evaluate.load`` fetches
the scripts from the hub, so they are called here directly, with the scripts' defaults):

- ``bleu``: ``sacrebleu.corpus_bleu(predictions, [references])`` with sacrebleu's defaults
  (``smooth_method="exp"``, no lowercasing, its default tokenizer: ``13a`` in sacrebleu 2.x),
  the corpus ``score`` (0-100);
- ``rouge_l``: ``rouge_score``'s ``RougeScorer`` over the four default types
  (``rouge1``, ``rouge2``, ``rougeL``, ``rougeLsum``, in that order: the bootstrap of each draws
  from the same random stream, so the order matters), no stemmer, its default tokenizer,
  aggregated by its ``BootstrapAggregator`` (1000 resamples with numpy's global generator):
  ``rougeL``'s **median of the bootstrap means** (its ``mid``), F-measure. ``evaluate`` runs
  ``compute`` under a numpy seed read from the global generator's state when the metric is
  loaded: 1, right after the script's ``np.random.seed(1)``, and again 1 at every fold (the
  seed is restored after each compute), so each fold starts from seed 1; the
  official script hands the items over in Python set order (which moves with
  ``PYTHONHASHSEED``), here they go in the test file's row order. Reported x100;
  ``rouge_l_mean`` is the plain mean over items. numpy's global generator is restored after.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")  # evaluate's rouge defaults, in its order
SEED = 1


def bleu(predictions: Sequence[str], references: Sequence[str]) -> float:
    import sacrebleu

    return float(sacrebleu.corpus_bleu(list(predictions), [list(references)], smooth_method="exp",
                                       lowercase=False, force=False, use_effective_order=False).score)


def rouge_l(predictions: Sequence[str], references: Sequence[str]) -> tuple[float, float]:
    """(bootstrap median, plain mean) of ROUGE-L F, both as fractions (see the module docstring)."""
    from rouge_score import rouge_scorer, scoring  # type: ignore[import-untyped,import-not-found,unused-ignore]

    scorer = rouge_scorer.RougeScorer(rouge_types=list(ROUGE_TYPES), use_stemmer=False)
    aggregator = scoring.BootstrapAggregator()
    values = []
    for reference, prediction in zip(references, predictions, strict=True):
        score = scorer.score(reference, prediction)
        aggregator.add_scores(score)
        values.append(score["rougeL"].fmeasure)
    state = np.random.get_state()
    np.random.seed(SEED)
    try:
        median = float(aggregator.aggregate()["rougeL"].mid.fmeasure)
    finally:
        np.random.set_state(state)
    return median, float(np.mean(values))
