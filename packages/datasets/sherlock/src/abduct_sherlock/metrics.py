"""The official Sherlock metrics as array functions (REFERENCE 1.3).

Each reproduces the leaderboard scorer's arithmetic, ties included:
retrieval ranks use average tie handling, GT localization uses ``lapjv`` on the negated
scores, auto localization takes the first best proposal and needs IoU > 0.5, comparison
breaks model ties with fixed per-position offsets from NumPy's legacy generator (seed 1).

Any finite score works. lapjv fails on large magnitudes (around 1e300 it corrupts memory and
aborts the process), so each image's matrix is first divided by its largest magnitude: values
in [-1, 1], the optimal assignment unchanged, and ``c * s`` scoring exactly like ``s`` for any
c > 0 (the same matrix reaches the solver whenever ``c * s`` is exact, e.g. integer scores;
otherwise it differs in the last bit, which moves no assignment but an exact near-tie). lapjv's
choice among tied assignments depends on the bits it is given, so on ties it follows the
official scorer where the division is exact (e.g. a largest magnitude that is a power of two). The comparison tie-break is
applied to exact ties only (the official scorer adds offsets of 1e-9, which vanish next to
scores of 1e300 and dominate scores of 1e-300); on scores that are not within 1e-9 of each
other without being equal, the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence

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
def assignment(scores: np.ndarray) -> np.ndarray:
    """The column assigned to each row by maximising total score with ``lapjv`` (as the
    official scorer does: on the negated float64 matrix). Its tie behaviour is kept."""
    import lapjv  # type: ignore[import-not-found,unused-ignore]

    sim = np.array(scores, dtype=np.float64)
    if sim.ndim != 2 or sim.shape[0] != sim.shape[1]:
        raise ValueError(f"GT localization needs a square matrix, got shape {sim.shape}")
    rows, _, _ = lapjv.lapjv(-unit_scale(sim))
    return np.asarray(rows)


def unit_scale(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` divided by its largest magnitude (unchanged when all zero): the same matrix for
    ``s`` and ``c * s``, in a range where the solver's sums cannot overflow."""
    if not np.all(np.isfinite(matrix)):
        raise ValueError("scores must be finite (got inf or nan)")
    peak = float(np.max(np.abs(matrix))) if matrix.size else 0.0
    if peak == 0.0:
        return matrix
    # a subnormal peak: scale by a power of two first (exact), so 1 / peak cannot overflow
    exponent = int(np.frexp(peak)[1])
    scaled = np.ldexp(matrix, -exponent)
    return np.asarray(scaled / np.max(np.abs(scaled)))


def gt_accuracy(scores: np.ndarray) -> float:
    """Fraction of boxes (rows) assigned their own inference (the diagonal)."""
    sol = assignment(scores)
    return float(np.mean(np.arange(len(sol)) == sol))


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
    equal predictions ordered by the fixed per-position tie-break; 0.0 when every label is equal."""
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


def source_scores(model: Sequence[float], annot1: Sequence[float], annot2: Sequence[float]) -> dict[str, float]:
    """One source: model, human (each annotator predicting the other) and oracle (their mean),
    each averaged over the two annotations as labels."""
    a1 = np.asarray(annot1, dtype=np.float64)
    a2 = np.asarray(annot2, dtype=np.float64)
    oracle = np.mean(np.vstack([a1, a2]), axis=0)
    pairs = ((a1, a2), (a2, a1))  # (the other annotator as predictor, label)
    return {
        "accuracy": float(np.mean([pairwise_accuracy(model, label) for _, label in pairs])),
        "human": float(np.mean([pairwise_accuracy(pred, label) for pred, label in pairs])),
        "oracle": float(np.mean([pairwise_accuracy(oracle, label) for _, label in pairs])),
    }
