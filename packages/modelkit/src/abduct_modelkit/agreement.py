"""Agreement between raters on nominal labels: Cohen's κ, Krippendorff's α, a confusion table.

Its home is abduct-modelkit (the judges are models; it needs nothing heavier than the core) so
that abduct-report and dataset packages without torch can import it.

Usage (a task whose judge is compared with human labels, or several judges with each other)::

    from abduct_modelkit.agreement import agreement_summary, cohen_kappa, confusion, judge_agreement, krippendorff_alpha

    kappa = cohen_kappa(judge_verdicts, human_labels)          # two raters, same items, no gaps
    alpha = krippendorff_alpha([judge_a, judge_b, human])      # ratings[rater][unit]; None = missing
    table = confusion(judge_verdicts, human_labels)            # {truth: {predicted: count}}
    summary = agreement_summary(judge_verdicts, human_labels)  # n, accuracy (percent), kappa, confusion

    # in a judged task's finish: the run's judges (several --judge specs) against people and each other
    block = judge_agreement(records["judge"], {item_id: human_label}, seed=run.settings.seed)
    return Evaluation(metrics, predictions, details={"judge_agreement": block})  # report.html, compare show it

With several ``--judge`` specs each ``Judged`` record of a ``Judge`` stage also carries
``others`` (each further judge's record of the item, by spec); ``judge_agreement`` reads them.
docs/plugin-reference.md ("Judge agreement") has the block's fields; docs/reading-the-numbers.md
how to read κ and α.

Conventions:

- Labels are any hashable values compared with ``==`` (``"yes"`` and ``"Yes"`` differ; normalise
  first). Tables key them by ``str(label)``; two labels with one text are refused.
- **Undefined is nan, never a made-up number.** κ = (p_o − p_e) / (1 − p_e) is undefined when
  p_e = 1 (both raters gave every item one and the same label) and when there are no items; α =
  1 − D_o / D_e is undefined when D_e = 0 (every pairable value is the same) and when no unit
  has two values. Both return ``float("nan")`` then (scikit-learn's ``cohen_kappa_score``
  returns nan with a warning in the first case; the ``krippendorff`` package raises
  ``ValueError`` for a single value). ``undefined_reason`` says why in words.
- κ is unweighted (nominal) and needs both sequences to be the same length with no missing
  value; α is nominal, takes any number of raters and missing values (``None`` or a float nan),
  and leaves out units with fewer than two values (they are not pairable).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

__all__ = [
    "agreement_summary",
    "judge_agreement",
    "cohen_kappa",
    "confusion",
    "krippendorff_alpha",
    "undefined_reason",
]


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _check_pair(a: Sequence[Hashable], b: Sequence[Hashable], names: tuple[str, str]) -> None:
    if len(a) != len(b):
        raise ValueError(f"{names[0]} has {len(a)} labels and {names[1]} {len(b)}: they must label the same items")
    for index, (x, y) in enumerate(zip(a, b, strict=True)):
        if _is_missing(x) or _is_missing(y):
            raise ValueError(
                f"item {index}: a missing label; leave the item out of both (or use krippendorff_alpha, which takes gaps)"
            )


def _kappa_parts(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[float, float]:
    """Observed agreement p_o and chance agreement p_e from each rater's own label frequencies."""
    n = len(a)
    p_o = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    count_a, count_b = Counter(a), Counter(b)
    p_e = sum(count_a[label] * count_b.get(label, 0) for label in count_a) / (n * n)
    return p_o, p_e


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's κ (unweighted) between two raters of the same items; nan when undefined.

    κ = (p_o − p_e) / (1 − p_e), p_o the share of items given the same label, p_e = Σ_k
    (n_a,k / n)(n_b,k / n) the agreement expected from each rater's label frequencies.
    """
    _check_pair(a, b, ("the first rater", "the second"))
    if not a:
        return math.nan
    p_o, p_e = _kappa_parts(a, b)
    if p_e == 1.0:
        return math.nan
    return (p_o - p_e) / (1.0 - p_e)


def _coincidences(ratings: Sequence[Sequence[Hashable | None]]) -> dict[tuple[Hashable, Hashable], float]:
    """Krippendorff's coincidence matrix o_ck over pairable units (two or more values)."""
    if not ratings:
        raise ValueError("no raters: ratings is ratings[rater][unit]")
    units = len(ratings[0])
    for rater, row in enumerate(ratings):
        if len(row) != units:
            raise ValueError(f"rater {rater} rates {len(row)} units and rater 0 {units}: give every rater one entry per unit (None when missing)")
    table: dict[tuple[Hashable, Hashable], float] = {}
    for unit in range(units):
        values = [row[unit] for row in ratings if not _is_missing(row[unit])]
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                pairs = n_c * (n_c - 1) if c == k else n_c * n_k  # ordered pairs of distinct raters
                if pairs:
                    table[(c, k)] = table.get((c, k), 0.0) + pairs / (m - 1)
    return table


def krippendorff_alpha(ratings: Sequence[Sequence[Hashable | None]]) -> float:
    """Krippendorff's α for nominal data; ``ratings[rater][unit]``, None (or nan) when missing.

    α = 1 − D_o / D_e = 1 − (n − 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k, with o_ck the coincidences
    of values c and k within units (each unit's pairs weighted 1 / (m_u − 1)), n_c = Σ_k o_ck and
    n = Σ_c n_c the number of pairable values. nan when undefined (see the module's notes).
    """
    table = _coincidences(ratings)
    n_c: dict[Hashable, float] = {}
    for (c, _k), o in table.items():
        n_c[c] = n_c.get(c, 0.0) + o
    n = sum(n_c.values())
    if n == 0:
        return math.nan
    disagree = sum(o for (c, k), o in table.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k)
    if expected == 0:
        return math.nan
    return 1.0 - (n - 1) * disagree / expected


def _label_keys(labels: Sequence[Hashable]) -> list[Hashable]:
    seen: dict[str, Hashable] = {}
    for label in labels:
        text = str(label)
        if text in seen and seen[text] != label:
            raise ValueError(f"labels {seen[text]!r} and {label!r} read the same ({text!r}); normalise them first")
        seen.setdefault(text, label)
    return sorted(seen.values(), key=str)


def confusion(predicted: Sequence[Hashable], truth: Sequence[Hashable]) -> dict[str, dict[str, int]]:
    """``{truth: {predicted: count}}`` over every label either side uses (zeros included, so the
    table is square), keys ``str(label)`` in sorted order."""
    _check_pair(predicted, truth, ("predicted", "truth"))
    labels = [str(label) for label in _label_keys([*truth, *predicted])]
    table = {row: dict.fromkeys(labels, 0) for row in labels}
    for p, t in zip(predicted, truth, strict=True):
        table[str(t)][str(p)] += 1
    return table


def undefined_reason(a: Sequence[Hashable], b: Sequence[Hashable]) -> str | None:
    """Why ``cohen_kappa(a, b)`` is nan, in words, or None when it is defined."""
    _check_pair(a, b, ("the first rater", "the second"))
    if not a:
        return "no items"
    if _kappa_parts(a, b)[1] == 1.0:
        return f"both raters gave every item the same label ({a[0]!r}): chance agreement is 1"
    return None


def agreement_summary(predicted: Sequence[Hashable], truth: Sequence[Hashable]) -> dict[str, object]:
    """A rater (a judge) against reference labels (people): ``n``, ``accuracy`` (percent equal),
    ``kappa`` (None when undefined, with ``kappa_undefined`` saying why) and ``confusion``.
    JSON-ready: no nan."""
    _check_pair(predicted, truth, ("predicted", "truth"))
    n = len(predicted)
    kappa = cohen_kappa(predicted, truth)
    summary: dict[str, object] = {
        "n": n,
        "accuracy": (100.0 * sum(1 for p, t in zip(predicted, truth, strict=True) if p == t) / n) if n else None,
        "kappa": None if math.isnan(kappa) else kappa,
        "confusion": confusion(predicted, truth),
    }
    reason = undefined_reason(predicted, truth)
    if reason is not None:
        summary["kappa_undefined"] = reason
    return summary


def _verdict(record: Any) -> Hashable | None:
    return record.equivalent  # type: ignore[no-any-return]


def _bool_score(label: Hashable) -> float:
    if not isinstance(label, bool):
        raise ValueError(f"label {label!r} is not a yes/no verdict: pass score= to say what it is worth")
    return 100.0 if label else 0.0


def judge_agreement(judged: Sequence[Any], human: Mapping[str, Hashable] | None = None, *,
                    label: Callable[[Any], Hashable | None] = _verdict,
                    score: Callable[[Hashable], float] | None = _bool_score, first: str = "judge",
                    resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The ``judge_agreement`` block a task puts in ``Evaluation.details`` (results.json; shown by
    report.html and ``abduct compare``): a judge stage's records (``Judged``, with ``others``
    from further ``--judge`` specs) against people's labels and each other.

    ``label(record)``: what a judge said of an item (default: its yes/no verdict; None: unread,
    left out); ``human``: people's label by item id (items without one are left out of the
    comparison with people); ``score(label)``: the number a judge's label gives the item
    (default: 100 for yes, 0 for no, so a judge's ``score`` is its percent of yes; None: no
    scores). ``first`` names the first ``--judge`` (results.json's ``judge.spec`` says which).

    Per judge: ``read`` and ``unread`` items, ``score`` (its mean), and with ``human``:
    ``human`` = ``agreement_summary`` against people (``n``, ``accuracy`` in percent, ``kappa``,
    ``confusion``). With two judges or more: ``alpha`` (Krippendorff's nominal α over the judges,
    unread labels missing), ``alpha_with_people`` (people as one more rater) and ``pairs``: each
    further judge against the first: ``both_read``, ``agreement`` (percent), ``kappa`` and the
    paired ``difference`` of their scores (other − first, over the items both read) with its 95%
    percentile-bootstrap interval (``low``, ``high``; the core's paired bootstrap, ``resamples``
    draws seeded by ``seed``).
    """
    from abduct import UnitScores
    from abduct.host import paired_bootstrap

    ids = [str(record.id) for record in judged]
    others = [getattr(record, "others", {}) for record in judged]  # the core's typed records carry them
    names = [first, *(dict.fromkeys(spec for mine in others for spec in mine))]
    labels: dict[str, dict[str, Hashable | None]] = {name: {} for name in names}
    for record, mine, item in zip(judged, others, ids, strict=True):
        labels[first][item] = label(record)
        for spec, other in mine.items():
            labels[spec][item] = label(other)
    people = {str(k): v for k, v in (human or {}).items() if not _is_missing(v)}  # no label: left out
    block: dict[str, Any] = {"items": len(ids), "human_labels": sum(i in people for i in ids) if human else 0,
                             "judges": []}
    for name in names:
        read = {i: v for i, v in labels[name].items() if v is not None}
        entry: dict[str, Any] = {"judge": name, "read": len(read), "unread": len(ids) - len(read)}
        if score is not None:
            entry["score"] = (sum(score(v) for v in read.values()) / len(read)) if read else None
        if human:
            both = [i for i in ids if i in read and i in people]
            entry["human"] = agreement_summary([read[i] for i in both], [people[i] for i in both])
        block["judges"].append(entry)
    if len(names) < 2:
        return block
    rows = [[labels[name].get(i) for i in ids] for name in names]
    block["alpha"] = _finite(krippendorff_alpha(rows))
    if human:
        block["alpha_with_people"] = _finite(krippendorff_alpha([*rows, [people.get(i) for i in ids]]))
    block["pairs"] = []
    for name in names[1:]:
        both = [i for i in ids if labels[first].get(i) is not None and labels[name].get(i) is not None]
        a, b = [labels[first][i] for i in both], [labels[name][i] for i in both]
        pair: dict[str, Any] = {"first": first, "other": name, "both_read": len(both),
                                "agreement": 100.0 * sum(x == y for x, y in zip(a, b, strict=True)) / len(both) if both else None,
                                "kappa": _finite(cohen_kappa(a, b)) if both else None}
        if score is not None and both:
            mine = UnitScores.means("item", {i: score(x) for i, x in zip(both, a, strict=True)}, scale=1.0)
            theirs = UnitScores.means("item", {i: score(y) for i, y in zip(both, b, strict=True)}, scale=1.0)
            paired = paired_bootstrap(mine, theirs, resamples, seed, f"judge agreement: {name} - {first}")
            pair["difference"] = (sum(theirs.values) - sum(mine.values)) / len(both)
            pair["low"], pair["high"] = (paired.low, paired.high) if paired is not None else (None, None)
        block["pairs"].append(pair)
    return block


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value
