"""``bertscore-hungarian``: BERTScore between two sets of sentences, matched one to one
(BlackSwan's generative scorer, ``metric/eval.py`` of its first commit).

Configured as that script: bert-score with ``distilbert-base-uncased`` at bert-score's tuned
layer for it (5), no idf, no baseline rescaling, one reference per call. Each **gold** sentence
is passed as the *candidate* and each **response** as the *reference*, and the **precision**
is kept, i.e. the mean over gold tokens of their best match among the response's tokens (the
response's recall of the gold). For one question, rows = gold sentences, columns = responses;
the Hungarian assignment (``abduct_metrics.matching``) gives ``min(#gold, #responses)`` pairs,
the rest is ignored; **avg** and **max** are the mean and maximum of the matched pairs' scores,
and the corpus values are their means over the questions.

Not in the script (it divides by zero there): a question whose gold set or response set is
empty (after dropping blank sentences) scores avg = max = 0.0 and counts in the means; the
result says how many (``info["empty_sets"]``, with a warning).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from abduct import MetricResult, Settings, Spec
from abduct.kit import validate_inputs
from abduct_metrics._bertscore import BertScore
from abduct_metrics._common import no_argument
from abduct_metrics.matching import TIE_TOLERANCE, match_one_to_one
from abduct_metrics.responses import SplitMode, split_responses

DEFAULT_MODEL = "distilbert-base-uncased"
AVG, MAX, MATCHED = "bertscore_hungarian_avg", "bertscore_hungarian_max", "matched_pairs"
KEYS = (AVG, MAX)


class BertScoreHungarian:
    """``bertscore-hungarian``: gold sentences matched one to one with response sentences."""

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        num_layers: int | None = None,
        split: SplitMode = "items",
        device: str = "cpu",
        batch_size: int = 64,
    ) -> None:
        split_responses("", split)  # an unknown mode fails before the model loads
        self.split = split
        self._bert = BertScore(model=model, num_layers=num_layers, idf=False, rescale_with_baseline=False,
                               device=device, batch_size=batch_size)
        layers = int(self._bert._scorer.num_layers)
        self.configuration: dict[str, Any] = {
            "model": str(model), "num_layers": layers, "idf": False, "rescale_with_baseline": False,
            "candidate": "gold", "reference": "response", "score": "precision",
            "matching": "one-to-one, scipy.optimize.linear_sum_assignment(maximize=True); unmatched ignored",
            "ties": f"max = the highest pair score in any optimal assignment (totals within {TIE_TOLERANCE})",
            "empty_set": "avg = max = 0.0, counted", "split": split,
        }

    @property
    def hash(self) -> str:
        return f"{self._bert.hash}_hungarian_gold-candidate_P"

    def compute(
        self,
        predictions: Mapping[str, str],
        references: Mapping[str, Sequence[str]],
        questions: Mapping[str, str] | None = None,
    ) -> MetricResult:
        """Each prediction split into responses (``split``: see ``abduct_metrics.responses``),
        each reference one gold sentence."""
        pred, refs, _ = validate_inputs(predictions, references, questions)
        return self.score_sets(refs, {k: split_responses(text, self.split) for k, text in pred.items()})

    def score_sets(self, golds: Mapping[str, Sequence[str]], responses: Mapping[str, Sequence[str]]) -> MetricResult:
        """The metric on sets given as lists (keys of ``responses``, in its order; ``golds``
        must have the same keys)."""
        gold = {k: [g for g in golds[k] if g.strip()] for k in responses}
        said = {k: [r for r in responses[k] if r.strip()] for k in responses}
        unique: dict[tuple[str, str], int] = {}
        for k in responses:
            for g in gold[k]:
                for r in said[k]:
                    unique.setdefault((g, r), len(unique))
        scores = self._bert.pair_scores([g for g, _ in unique], [r for _, r in unique])[:, 0] if unique else np.zeros(0)
        per_sample: dict[str, dict[str, float]] = {}
        pairs: dict[str, list[list[float]]] = {}
        empty = []
        for k in responses:
            matrix = np.array([[scores[unique[(g, r)]] for r in said[k]] for g in gold[k]], dtype=np.float64)
            matched = match_one_to_one(matrix.reshape(len(gold[k]), len(said[k])))
            if not matched.pairs:
                empty.append(k)
            per_sample[k] = {AVG: matched.avg, MAX: matched.max, MATCHED: float(len(matched.pairs))}
            pairs[k] = [[float(i), float(j), s] for i, j, s in matched.pairs]
        if empty:
            more = f" (and {len(empty) - 1} more)" if len(empty) > 1 else ""
            warnings.warn(f"bertscore-hungarian: record '{empty[0]}'{more}: no gold sentence or no response; "
                          "scored avg = max = 0.0 and counted", stacklevel=2)
        corpus = {key: float(np.mean([row[key] for row in per_sample.values()])) if per_sample else 0.0
                  for key in KEYS}
        info = {"hash": self.hash, "bertscore_hash": self._bert.hash, "configuration": dict(self.configuration),
                "empty_sets": len(empty), "empty_ids": empty, "pairs": pairs,
                "responses": {k: list(v) for k, v in said.items()}}
        return MetricResult(corpus, per_sample, info)


def make_bertscore_hungarian(
    spec: Spec,
    settings: Settings,
    *,
    model: str = DEFAULT_MODEL,
    num_layers: int | None = None,
    split: SplitMode = "items",
    batch_size: int | None = None,
) -> BertScoreHungarian:
    """``bertscore-hungarian[,model=...,num_layers=...,split=items|lines|none,batch_size=N]``.

    The device is the run's (``--device``); the batch size is the run's unless given."""
    no_argument(spec)
    return BertScoreHungarian(model=model, num_layers=num_layers, split=split, device=settings.torch_device(),
                              batch_size=settings.batch_size if batch_size is None else batch_size)
