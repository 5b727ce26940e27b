"""The official Sherlock metrics as array functions (REFERENCE 1.3), each in two arithmetics.

The ``official_*`` functions reproduce the leaderboard scorers' own arithmetic, ties and
rounding included: comparison adds its tie-break offsets (below 1e-9) to the float64 scores,
GT localization calls ``lapjv`` on the negated scores, which casts them to float32 and solves
in float32. The functions without the prefix are abduct's full-precision ones: comparison breaks
exact ties only (by the same offsets' order) and orders every other pair by its scores; GT
localization solves on each image's scores shifted and scaled into [-1, 1] (``unit_scale``), in float64
where float32 would lose the best assignment, so ``c * s`` scores like ``s`` for any c > 0.
Retrieval ranks and the auto-box argmax compare the scores exactly in both (the official code
does too), +-inf included.

The two differ only where the official arithmetic loses information: ties near 1e8 that the
offsets cannot break, gaps below their 1e-9 or below float32's resolution, subnormal scores,
scores that float32 cannot hold. ``precision.py`` decides what is reported then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

IOU_THRESHOLD = 0.5
# The first ten draws of NumPy's legacy generator after seed(1), scaled by 1e-9: the official
# per-position tie-break for comparison (a source has at most 10 candidates).
TIEBREAK = np.random.RandomState(1).random_sample(10) / 1e9
MAX_CANDIDATES = len(TIEBREAK)


# -- retrieval ------------------------------------------------------------------------------
def diagonal_ranks(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average-tie ranks (1 = best) of each true pair ``S[i, i]`` within its row (im->txt)
    and within its column (txt->im); equal to ``diag(rankdata(-S, axis=...))``."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        raise ValueError(f"retrieval needs a square score matrix, got shape {s.shape}")
    d = np.diagonal(s)
    # rank of d among values: (#strictly better) + (#equal, itself included, + 1) / 2
    row = (s > d[:, None]).sum(axis=1) + ((s == d[:, None]).sum(axis=1) + 1) / 2.0
    col = (s > d[None, :]).sum(axis=0) + ((s == d[None, :]).sum(axis=0) + 1) / 2.0
    return row.astype(np.float64), col.astype(np.float64)


def retrieval_metrics(im2txt_ranks: np.ndarray, txt2im_ranks: np.ndarray) -> dict[str, float]:
    """Mean ranks and P@1 (x100; a tie at the top is a miss) of one chunk."""
    im2txt = np.asarray(im2txt_ranks, dtype=np.float64)
    return {
        "im2txt": float(np.mean(im2txt)),
        "txt2im": float(np.mean(np.asarray(txt2im_ranks, dtype=np.float64))),
        "p_at_1": float(100 * np.mean(im2txt == 1.0)),
    }


def retrieval_scores(scores: np.ndarray) -> dict[str, float]:
    return retrieval_metrics(*diagonal_ranks(scores))


# -- localization ---------------------------------------------------------------------------
# lapjv casts the costs to float32 (its default since 1.3.0) and sums them there; below this
# bound its sums stay finite with a wide margin (float32 ends at 3.4e38; at 1e300 the cast
# gives infinite costs, and lapjv returns -1 for some rows or aborts the process).
FLOAT32_SAFE = float(np.finfo(np.float32).max) / 2**20


def _square(scores: np.ndarray) -> np.ndarray:
    sim = np.array(scores, dtype=np.float64)
    if sim.ndim != 2 or sim.shape[0] != sim.shape[1]:
        raise ValueError(f"GT localization needs a square matrix, got shape {sim.shape}")
    return sim


def official_assignment(scores: np.ndarray) -> np.ndarray | None:
    """The column the official scorer assigns to each row: ``lapjv.lapjv(-S)`` on the float64
    matrix, exactly its call (lapjv casts to float32 and solves there; its tie behaviour is
    kept). None where that cast leaves a cost infinite (a +-inf score, or one beyond float32's
    range) or beyond ``FLOAT32_SAFE``: lapjv's float32 sums can then turn infinite or NaN, and
    it returns -1 for some rows (no assignment) or aborts the process (seen at 1e300), so the
    official scorer has no number (and abduct does not risk the process on it)."""
    import lapjv  # type: ignore[import-not-found,unused-ignore]

    sim = _square(scores)
    with np.errstate(over="ignore"):
        costs = (-sim).astype(np.float32)
    if not np.all(np.isfinite(costs)) or (costs.size and float(np.max(np.abs(costs))) > FLOAT32_SAFE):
        return None
    rows, _, _ = lapjv.lapjv(-sim)
    return np.asarray(rows)


def assignment(scores: np.ndarray) -> np.ndarray:
    """The column assigned to each row by maximising total score in full precision, on
    ``unit_scale(S)`` (any magnitude, +-inf ranked): ``lapjv`` as the official scorer runs it
    (float32, its tie behaviour), unless float32 rounding made that assignment worse than
    lapjv's float64 one for the exact scores; then the float64 one."""
    import lapjv  # type: ignore[import-not-found,unused-ignore]

    sim = _square(scores)
    scaled = unit_scale(sim)
    rows = np.asarray(lapjv.lapjv(-scaled)[0])
    exact = np.asarray(lapjv.lapjv(-scaled, force_doubles=True)[0])
    return rows if _at_least(sim, rows, exact) else exact


def unit_scale(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` shifted and scaled into [-1, 1]: the midpoint of its finite entries' range to
    0, half the range to 1 (all zero when they are equal), and +-inf as +-(2n + 1), beyond any
    difference of two assignments' finite totals, so an assignment with more +inf and fewer
    -inf scores wins whatever its finite ones (the extended-real order). A shift and a positive
    scale of the whole matrix change no assignment's rank, and ``c * s + b`` gives ``s``'s
    matrix (up to the last bit) for any c > 0: the scores the advice in ``precision.GT_LOSS``
    makes, which the official solver then ranks as full precision does."""
    if np.isnan(matrix).any():
        raise ValueError("scores must not be NaN")
    finite = np.isfinite(matrix)
    out = np.where(finite, matrix, 0.0)
    peak = float(np.max(np.abs(out))) if out.size else 0.0
    if peak > 0.0:
        # a power of two first (exact): the largest magnitude into [0.5, 1), where halves and
        # differences neither overflow (1e308) nor lose bits (subnormals)
        out = np.ldexp(out, -int(np.frexp(peak)[1]))
        low, high = float(np.min(out[finite])), float(np.max(out[finite]))
        half = (high - low) / 2
        out = (out - (low + high) / 2) / half if half > 0 else np.zeros_like(out)
    beyond = 2.0 * len(matrix) + 1.0
    return np.asarray(np.where(finite, out, np.sign(matrix) * beyond))


def assignment_value(scores: np.ndarray, columns: np.ndarray) -> tuple[int, Fraction]:
    """The exact total of an assignment in the extended reals: (number of +inf minus number of
    -inf scores taken, the exact sum of the finite ones); larger is better. None of a solver's
    rounding enters, so two assignments compare as the scores say."""
    taken = np.asarray(scores, dtype=np.float64)[np.arange(len(columns)), np.asarray(columns)]
    infinite = int(np.sum(taken == np.inf)) - int(np.sum(taken == -np.inf))
    return infinite, sum((Fraction(float(v)) for v in taken[np.isfinite(taken)]), Fraction(0))


def _at_least(scores: np.ndarray, columns: np.ndarray, other: np.ndarray) -> bool:
    """Whether assignment ``columns`` is worth at least ``other`` for the exact scores."""
    return bool(np.array_equal(columns, other)) or assignment_value(scores, columns) >= assignment_value(scores, other)


def is_assignment(columns: np.ndarray | None, n: int) -> bool:
    return columns is not None and sorted(int(c) for c in columns) == list(range(n))


@dataclass(frozen=True)
class GTResult:
    """One image's GT figures: ``accuracy`` the official scorer's (abduct's full-precision one
    where the official scorer has none), ``full`` the full-precision one, ``official`` what
    happened to the official arithmetic ("" nothing lost, "degraded": its assignment is not
    optimal for the exact scores, "unavailable": it has no number), ``columns`` the
    assignment behind ``accuracy``. Where the scores tie exactly, the two may pick different
    optimal assignments: nothing is lost, the official one is the official tie rule."""

    accuracy: float
    full: float
    official: str
    columns: list[int]

    def record(self) -> dict[str, Any]:
        """The fields of a localization record: ``gt_accuracy`` and ``assignment`` (box i gets
        inference ``assignment[i]``), with ``gt_accuracy_full_precision`` where it differs and
        ``gt_accuracy_official`` where the official arithmetic lost information."""
        out: dict[str, Any] = {"gt_accuracy": self.accuracy, "assignment": self.columns}
        if self.full != self.accuracy:
            out["gt_accuracy_full_precision"] = self.full
        if self.official:
            out["gt_accuracy_official"] = self.official
        return out


def _own(columns: np.ndarray) -> float:
    return float(np.mean(np.arange(len(columns)) == np.asarray(columns)))


def gt_result(scores: np.ndarray) -> GTResult:
    """Both arithmetics on one image's box x inference matrix (rows = boxes)."""
    sim = _square(scores)
    full = assignment(sim)
    official = official_assignment(sim)
    if official is None:
        return GTResult(_own(full), _own(full), "unavailable", [int(j) for j in full])
    valid = is_assignment(official, len(sim))
    optimal = valid and _at_least(sim, official, full)
    return GTResult(_own(official), _own(full), "" if optimal else "degraded",
                    [int(j) for j in (official if valid else full)])


def gt_accuracy(scores: np.ndarray) -> float:
    """Fraction of boxes (rows) assigned their own inference (the diagonal), as the official
    scorer computes it (full precision where it cannot)."""
    return gt_result(scores).accuracy


def best_proposal_hit(scores: Sequence[float], ious: Sequence[float], threshold: float = IOU_THRESHOLD) -> float:
    """1.0 when the highest-scoring proposal (first one on ties) has IoU > threshold."""
    return float(ious[int(np.argmax(np.asarray(scores, dtype=np.float64)))] > threshold)


def oracle_proposal_hit(ious: Sequence[float], threshold: float = IOU_THRESHOLD) -> float:
    """The same for the best-IoU proposal: whether the image's proposals can solve it."""
    return float(ious[int(np.argmax(np.asarray(ious, dtype=np.float64)))] > threshold)


def image_auto_accuracy(per_inference: Sequence[tuple[Sequence[float], Sequence[float]]]) -> tuple[float, float]:
    """Mean hit over an image's inferences, for the model and for the IoU oracle."""
    hits = [best_proposal_hit(s, i) for s, i in per_inference]
    oracle = [oracle_proposal_hit(i) for _, i in per_inference]
    return float(np.mean(hits)), float(np.mean(oracle))


def macro_percent(values: Sequence[float]) -> float:
    """100 x the mean over images (or sources), in the given order."""
    return float(np.mean(values) * 100)


# -- comparison -----------------------------------------------------------------------------
def pairwise_accuracy(predictions: Sequence[float] | np.ndarray, labels: Sequence[float] | np.ndarray) -> float:
    """Over candidate pairs with unequal labels: (fraction ordered like the labels - 0.5) x 2,
    equal predictions ordered by the fixed per-position tie-break; 0.0 when every label is equal.
    Full precision: the offsets break exact ties only (+-inf ties included), every other pair
    is ordered by its scores whatever their magnitude."""
    label = np.asarray(labels, dtype=np.float64)
    n = len(label)
    if n > MAX_CANDIDATES:
        raise ValueError(f"at most {MAX_CANDIDATES} candidates per source, got {n}")
    pred = np.asarray(predictions, dtype=np.float64)
    i, j = np.triu_indices(n, k=1)
    informative = label[i] != label[j]
    total = int(informative.sum())
    if total == 0:
        return 0.0
    # a tie is ordered by the offsets; any other pair by its scores, whatever their magnitude
    below = np.where(pred[i] == pred[j], TIEBREAK[i] < TIEBREAK[j], pred[i] < pred[j])
    agree = (label[i] < label[j]) == below
    correct = int((agree & informative).sum())
    return (correct / total - 0.5) * 2


def official_pairwise_accuracy(predictions: Sequence[float] | np.ndarray, labels: Sequence[float] | np.ndarray) -> float:
    """``pairwise_accuracy`` in the official scorer's arithmetic: the offsets are added to the
    float64 scores and the sums compared. Next to scores near 1e8 the offsets round away (a tie
    stays a tie, and a tie counts as the earlier candidate scoring higher: ``a < b`` is false
    both ways), as they do between two equal infinities; scores closer than 1e-9 (subnormal
    ones) are ordered by the offsets instead of by their values."""
    label = np.asarray(labels, dtype=np.float64)
    n = len(label)
    if n > MAX_CANDIDATES:
        raise ValueError(f"at most {MAX_CANDIDATES} candidates per source, got {n}")
    tiebroken = np.asarray(predictions, dtype=np.float64) + TIEBREAK[:n]
    i, j = np.triu_indices(n, k=1)
    informative = label[i] != label[j]
    total = int(informative.sum())
    if total == 0:
        return 0.0
    agree = (label[i] < label[j]) == (tiebroken[i] < tiebroken[j])
    return (int((agree & informative).sum()) / total - 0.5) * 2


def source_scores(model: Sequence[float], annot1: Sequence[float], annot2: Sequence[float]) -> dict[str, Any]:
    """One source: model, human (each annotator predicting the other) and oracle (their mean),
    each averaged over the two annotations as labels, in the official arithmetic; where the
    model's full-precision agreement differs, it as ``accuracy_full_precision`` and
    ``accuracy_official: "degraded"`` (the annotators' small integers lose nothing)."""
    a1 = np.asarray(annot1, dtype=np.float64)
    a2 = np.asarray(annot2, dtype=np.float64)
    oracle = np.mean(np.vstack([a1, a2]), axis=0)
    pairs = ((a1, a2), (a2, a1))  # (the other annotator as predictor, label)
    out: dict[str, Any] = {
        "accuracy": float(np.mean([official_pairwise_accuracy(model, label) for _, label in pairs])),
        "human": float(np.mean([official_pairwise_accuracy(pred, label) for pred, label in pairs])),
        "oracle": float(np.mean([official_pairwise_accuracy(oracle, label) for _, label in pairs])),
    }
    full = float(np.mean([pairwise_accuracy(model, label) for _, label in pairs]))
    if full != out["accuracy"]:
        out.update(accuracy_full_precision=full, accuracy_official="degraded")
    return out
