"""VAR's official scoring, as its eval kit computes it, on pycocoevalcap (through abduct-metrics).

- each event is scored against its single reference (its ``gt_sentence``);
- non-ASCII characters become spaces, then PTB tokenisation, once per sentence (one Java call
  for the predictions, one for the references); the scorers get those tokens as they are;
- a line break inside a sentence (``\r``, ``\r\n``, ``\x0b``, ``\x0c``) is read as a space,
  with a warning: the one deliberate difference from the kit, whose tokenizer then shifts
  every later event onto the wrong reference;
- BLEU-1..4 at corpus level over the events; METEOR, ROUGE-L and CIDEr-D as the mean of the
  per-event scores, CIDEr's document frequencies coming from the scored set's references;
- BERTScore F1 (when a model directory is given; the kit uses roberta-large, layer 17, no idf,
  rescaled with baseline) on the tokenised strings, averaged over an example's events, then
  over examples (an example whose mean is NaN adds 0 but still counts, as in the kit);
- ``all`` scores every event; ``separate`` adds ``observed`` (premise events) and
  ``hypothesis``, each a set of its own (its own CIDEr document frequencies);
- values ×100.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from abduct import AbductError, Metric, UnitScores
from abduct_var.submission import Entry

if TYPE_CHECKING:
    from abduct_metrics.captions import PtbTokens

KEYS = ("bleu_1", "bleu_2", "bleu_3", "bleu_4", "meteor", "rouge_l", "cider")
PER_EVENT = ("meteor", "rouge_l", "cider")
GROUPS = ("all", "observed", "hypothesis")
UNIT = "video example"

MetricMaker = Callable[..., Metric]  # a metric by name and options, as RunInfo.metric builds one


@dataclass(frozen=True)
class BertScoreSettings:
    """The kit's BERTScore: ``model`` a local directory (roberta-large there), ``layers`` 17,
    ``baseline`` the rescaling TSV (bert-score's own for a hub name when None)."""

    model: Path
    layers: int = 17
    baseline: Path | None = None
    rescale: bool = True


def event_key(entry: Entry) -> str:
    return f"{entry.example_id}\x00{entry.position}"


@dataclass
class SetScores:
    """One scored set: corpus values, per-event values and BLEU's per-event sufficient
    statistics by event key, and BERTScore F1 by example when it ran (values ×100, as
    abduct-metrics gives them)."""

    values: dict[str, float]
    per_event: dict[str, dict[str, float]]
    bleu_statistics: dict[str, tuple[float, ...]] = field(default_factory=dict)
    bertscore_by_example: dict[str, float] = field(default_factory=dict)

    def units(self, entries: Sequence[Entry], prefix: str = "") -> dict[str, UnitScores]:
        """Each metric's per-example data (``UnitScores``, the unit VAR's scores average over:
        the video example, its events together): BLEU from the summed statistics, METEOR,
        ROUGE-L and CIDEr-D as (sum, count) of the per-event values, BERTScore per example."""
        from abduct_metrics.captions import CIDER_FIXED_DF

        example_of = {event_key(e): e.example_id for e in entries if event_key(e) in self.per_event}
        out = {f"{prefix}bleu_{n}": UnitScores.pooled(UNIT, f"bleu-{n}", self.bleu_statistics, example_of, 100.0)
               for n in range(1, 5)}
        for key in PER_EVENT:
            if key in self.values:
                rows = {k: (self.per_event[k][key], 1.0) for k in example_of}
                out[prefix + key] = UnitScores.pooled(UNIT, "ratio", rows, example_of, 1.0,
                                                      CIDER_FIXED_DF if key == "cider" else "")
        if self.bertscore_by_example:
            out[f"{prefix}bertscore_f1"] = UnitScores.means(UNIT, self.bertscore_by_example, 1.0)
        return out


def kit_tokens(entries: Sequence[Entry]) -> tuple[list[PtbTokens], list[PtbTokens]]:
    """Tokenised predictions and references, each list in one PTB call in submission order, as
    the kit tokenises them. The order matters: PTB reads a lone letter before a period (``d.``)
    as an initial unless the next line starts with a capital, and the next line is the next
    prediction (or reference) of the same set."""
    from abduct_metrics.captions import clean_non_ascii, ptb_tokenize  # Java runs here, not at import

    predictions = ptb_tokenize([clean_non_ascii(e.sentence) for e in entries])
    references = ptb_tokenize([clean_non_ascii(e.gt_sentence) for e in entries])
    return predictions, references


def _coco(entries: Sequence[Entry], meteor: bool = True) -> SetScores:
    from abduct_metrics.captions import CocoCaptionMetric  # pycocoevalcap loads here, not at import

    keys = [event_key(e) for e in entries]
    tokens, refs = kit_tokens(entries)
    # ``PtbTokens`` are scored as given: the scorers see the kit's tokens (tokenising them again
    # would change text PTB rewrites, e.g. ``:)`` -> ``:-rrb-`` -> ``-rrb-``).
    chosen = ("bleu", "meteor", "rouge-l", "cider") if meteor else ("bleu", "rouge-l", "cider")
    result = CocoCaptionMetric(chosen).compute(dict(zip(keys, tokens)), {k: [r] for k, r in zip(keys, refs)})
    means = result.info["mean_per_sample"]
    values = {key: float(result.corpus[key]) for key in KEYS if key.startswith("bleu")}
    values.update({key: float(means[key]) for key in PER_EVENT if key in means})
    return SetScores(values, {k: dict(v) for k, v in result.per_sample.items()}, dict(result.info["bleu_statistics"]))


def _bertscore(entries: Sequence[Entry], settings: BertScoreSettings, metric: MetricMaker | None = None
               ) -> dict[str, float]:
    """The kit's BERTScore F1 (×100) by example: per-event F1 on tokenised strings, mean per
    example (NaN, as the kit adds it, 0); the score is their mean over examples. ``metric`` builds
    it (the run's or ``abduct score``'s registry; the process's when a script calls this alone)."""
    options: dict[str, Any] = {"model": str(settings.model), "num_layers": settings.layers,
                               "rescale_with_baseline": settings.rescale}
    if settings.baseline is not None:
        options["baseline_path"] = settings.baseline
    if metric is None:
        from abduct.host import get_registry

        metric = functools.partial(get_registry().create, "metric")
    predictions, references = kit_tokens(entries)
    keys = [event_key(e) for e in entries]
    result = metric("bertscore", **options).compute(dict(zip(keys, predictions)), {k: [r] for k, r in zip(keys, references)})
    per_example: dict[str, list[float]] = {}
    for e, key in zip(entries, keys):
        per_example.setdefault(e.example_id, []).append(float(result.per_sample[key]["bertscore_f1"]))
    means = {example: float(np.mean(values)) for example, values in per_example.items()}
    return {example: 0.0 if math.isnan(m) else m for example, m in means.items()}


def score_sets(entries: Sequence[Entry], *, separate: bool = False, bertscore: BertScoreSettings | None = None,
               meteor: bool = True, metric: MetricMaker | None = None) -> dict[str, SetScores]:
    """The ``all`` set and, with ``separate``, ``observed`` and ``hypothesis``, each scored on its
    own. ``meteor=False`` leaves METEOR out (its Java start-up is most of a small set's time)."""
    if not entries:
        raise AbductError("nothing to score: the submission has no events")
    sets: dict[str, list[Entry]] = {"all": list(entries)}
    if separate:
        sets["observed"] = [e for e in entries if not e.is_hypothesis]
        sets["hypothesis"] = [e for e in entries if e.is_hypothesis]
        for name in ("observed", "hypothesis"):
            if not sets[name]:
                raise AbductError(f"--separate needs {name} events, and the submission has none")
    out: dict[str, SetScores] = {}
    for name, members in sets.items():
        scored = _coco(members, meteor)
        if bertscore is not None:
            scored.bertscore_by_example = _bertscore(members, bertscore, metric)
            scored.values["bertscore_f1"] = float(np.mean(list(scored.bertscore_by_example.values())))
        out[name] = scored
    return out


def score_entries(entries: Sequence[Entry], *, separate: bool = False, bertscore: BertScoreSettings | None = None,
                  meteor: bool = True, metric: MetricMaker | None = None) -> dict[str, Any]:
    """``{"all": {...}}`` and, with ``separate``, ``"observed"`` and ``"hypothesis"`` (×100)."""
    sets = score_sets(entries, separate=separate, bertscore=bertscore, meteor=meteor, metric=metric)
    return {name: scored.values for name, scored in sets.items()}


def breakdown(entries: Sequence[Entry], per_event: Mapping[str, Mapping[str, float]],
              group_of: Mapping[str, str]) -> dict[str, dict[str, float]]:
    """``{group: {metric: mean per-event value ×100, n}}`` for the per-event metrics."""
    groups: dict[str, list[Mapping[str, float]]] = {}
    for e in entries:
        key = event_key(e)
        groups.setdefault(group_of[key], []).append(per_event[key])
    return {g: {**{m: float(np.mean([row[m] for row in rows])) for m in PER_EVENT if m in rows[0]},
                "n": float(len(rows))}
            for g, rows in sorted(groups.items(), key=lambda item: (len(item[0]), item[0]))}
