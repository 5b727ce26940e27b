"""Exact match after a documented answer normalisation (pure Python, no heavy imports).

``normalize_answer`` applies, in order:

1. Unicode NFKC, then lowercase;
2. every punctuation character (Unicode category ``P*``) removed — ``"don't"`` -> ``"dont"``,
   ``"u.s."`` -> ``"us"``, ``"10%"`` -> ``"10"``; symbols (``$``, ``+``) are kept;
3. split on whitespace; the articles ``a``, ``an``, ``the`` dropped;
4. number words ``zero`` ... ``twenty`` and ``thirty`` ... ``ninety`` replaced by digits,
   word by word (``"two dogs"`` -> ``"2 dogs"``; compounds are not combined);
5. words joined by single spaces (which also strips both ends).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from abduct.contract.metric_info import COUNT, MetricInfo, lower
from abduct.contract.protocols import MetricResult
from abduct.contract.spec import Settings, Spec
from abduct.kit.metric_inputs import validate_inputs
from abduct.kit.reasoning import NOT_FINISHED, Reply

ARTICLES = frozenset({"a", "an", "the"})
NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
NUMBER_WORDS.update({w: str(10 * (i + 3)) for i, w in enumerate(
    "thirty forty fifty sixty seventy eighty ninety".split())})


def normalize_answer(text: str) -> str:
    """The normalised form two answers are compared in (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    words = [NUMBER_WORDS.get(w, w) for w in text.split() if w not in ARTICLES]
    return " ".join(words)


def exact_match(prediction: str, references: Sequence[str]) -> bool:
    """True when the normalised prediction equals any normalised reference."""
    target = normalize_answer(prediction)
    return any(target == normalize_answer(ref) for ref in references)


class ExactMatch:
    """``exact_match``: 100 x the share of predictions equal to one of their references after
    normalisation (the scale of every text metric, as abduct-metrics'); per sample 100.0 or 0.0."""

    def compute(
        self,
        predictions: Mapping[str, str],
        references: Mapping[str, Sequence[str]],
        questions: Mapping[str, str] | None = None,
    ) -> MetricResult:
        pred, refs, _ = validate_inputs(predictions, references, questions)
        hits = {key: exact_match(pred[key], refs[key]) for key in pred}
        mean = 100.0 * (sum(hits.values()) / len(hits))
        return MetricResult({"exact_match": mean}, {key: {"exact_match": 100.0 * hit} for key, hit in hits.items()},
                            {"normalisation": "nfkc-lower-punct-articles-numbers-whitespace"})


def make_exact_match(spec: Spec, settings: Settings) -> ExactMatch:
    return ExactMatch()


# -- answers read from text that could not be read ----------------------------------------------
# Every task that reads an answer from a model's text reports ``unparsed`` (count, lower is
# better), ``unparsed_rate`` (percent of the answers read) and ``unparsed_reasons.<reason>``
# (counts), the reasons being these; how an unparsed answer is scored stays the official code's.
UNPARSED_REASONS = ("empty", NOT_FINISHED, "no option found", "several options")
UNPARSED_INFO: dict[str, MetricInfo] = {"unparsed": lower(0.0), "unparsed_rate": lower(0.0, 100.0),
                                        "unparsed_reasons.*": COUNT}


def unparsed_reason(text: str, *, parsed: bool, several: bool = False) -> str | None:
    """Why ``text`` gave no answer (None: it gave one): a ``Reply`` whose reasoning never closed
    (``abduct.kit.reasoning``), an empty text, or ``several``: the task's reading found more than
    one answer; else no option found."""
    if parsed:
        return None
    if isinstance(text, Reply) and not text.finished:
        return NOT_FINISHED
    if not text.strip():
        return "empty"
    return "several options" if several else "no option found"


def unparsed_metrics(reasons: Sequence[str | None]) -> dict[str, object]:
    """``unparsed``, ``unparsed_rate`` and ``unparsed_reasons`` of the answers' reasons (None: parsed)."""
    found = [r for r in reasons if r is not None]
    out: dict[str, object] = {"unparsed": len(found),
                              "unparsed_rate": 100.0 * len(found) / len(reasons) if reasons else 0.0}
    if found:  # only the reasons that occurred
        out["unparsed_reasons"] = {r: found.count(r) for r in dict.fromkeys(found)}
    return out


MOSTLY_UNPARSED = 50.0  # percent of the answers: more unread than this and a run ends with a warning


def unparsed_warnings(metrics: Mapping[str, Any], where: str = "") -> list[str]:
    """One loud line for each set of answers (a task's, or each part's of a task with parts) more
    than ``MOSTLY_UNPARSED`` percent of which could not be read, naming the reasons."""
    lines = [line for key, value in metrics.items() if isinstance(value, Mapping) and key != "unparsed_reasons"
             for line in unparsed_warnings(value, f"{where}{key}: ")]
    rate, count = metrics.get("unparsed_rate"), metrics.get("unparsed")
    if isinstance(rate, (int, float)) and isinstance(count, int) and rate > MOSTLY_UNPARSED:
        reasons = metrics.get("unparsed_reasons")
        named = ", ".join(f"{reason} {n}" for reason, n in reasons.items()) if isinstance(reasons, Mapping) else ""
        of = f" of {round(count * 100 / rate):,}" if rate else ""
        lines.insert(0, f"WARNING: {where}{count:,}{of} answers ({rate:.0f}%) could not be read"
                        f"{f' ({named})' if named else ''}; the metrics measure the reading more than the model: "
                        "check the prompt, max_new_tokens and reasoning= (samples.html shows the unparsed ones)")
    return lines
