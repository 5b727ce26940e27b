"""The metric functions on hand-computed cases and against straightforward references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.stats import rankdata

from abduct_sherlock import metrics


# -- retrieval ------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 5, 100])
def test_all_tied_matrix_gives_middle_rank_and_no_hit(n: int) -> None:
    result = metrics.retrieval_scores(np.full((n, n), 0.25))
    assert result == {"im2txt": (n + 1) / 2, "txt2im": (n + 1) / 2, "p_at_1": 100.0 if n == 1 else 0.0}


def test_perfect_matrix() -> None:
    assert metrics.retrieval_scores(np.eye(4)) == {"im2txt": 1.0, "txt2im": 1.0, "p_at_1": 100.0}


def test_hand_computed_average_ranks_with_ties() -> None:
    s = np.array([[1.0, 1.0, 0.0], [2.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    im2txt, txt2im = metrics.diagonal_ranks(s)
    np.testing.assert_array_equal(im2txt, [1.5, 2.5, 2.0])  # a tie at the top is rank 1.5
    np.testing.assert_array_equal(txt2im, [2.0, 1.5, 2.5])
    assert metrics.retrieval_scores(s) == {"im2txt": 2.0, "txt2im": 2.0, "p_at_1": 0.0}


def test_duplicate_rows() -> None:
    s = np.array([[3.0, 1.0, 0.0], [3.0, 1.0, 0.0], [0.0, 0.0, 5.0]])
    im2txt, txt2im = metrics.diagonal_ranks(s)
    np.testing.assert_array_equal(im2txt, [1.0, 2.0, 1.0])
    np.testing.assert_array_equal(txt2im, [1.5, 1.5, 1.0])
    assert metrics.retrieval_scores(s)["p_at_1"] == pytest.approx(200 / 3)


@pytest.mark.parametrize("seed", range(5))
def test_ranks_equal_scipy_rankdata_on_tie_heavy_matrices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 4, size=(37, 37)).astype(np.float32).astype(np.float64)
    s[3] = s[5]  # duplicate rows
    im2txt, txt2im = metrics.diagonal_ranks(s)
    np.testing.assert_array_equal(im2txt, np.diagonal(rankdata(-s, axis=1)))
    np.testing.assert_array_equal(txt2im, np.diagonal(rankdata(-s, axis=0)))
    expected_p1 = float(100 * np.mean(np.diagonal(rankdata(-s, axis=1)) == 1.0))
    assert metrics.retrieval_scores(s)["p_at_1"] == expected_p1


def test_non_square_matrix_is_refused() -> None:
    with pytest.raises(ValueError):
        metrics.diagonal_ranks(np.zeros((2, 3)))


# -- localization ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_all_equal_gt_matrix_scores_zero_with_lapjv(n: int) -> None:
    sim = np.zeros((n, n))
    assert metrics.gt_accuracy(sim) == 0.0
    # the reason the solver matters: scipy returns the identity (100%) on the same matrix
    rows, cols = linear_sum_assignment(-sim)
    assert np.mean(cols == np.arange(n)) == 1.0


def test_identity_and_single_box() -> None:
    assert metrics.gt_accuracy(np.eye(5)) == 1.0
    assert metrics.gt_accuracy(np.array([[0.3]])) == 1.0


def test_assignment_maximises_total_score() -> None:
    # box 0 likes inference 1 best, box 1 only inference 0: the swap is the optimum
    sim = np.array([[0.5, 0.9, 0.0], [0.8, 0.1, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(metrics.assignment(sim), [1, 0, 2])
    assert metrics.gt_accuracy(sim) == pytest.approx(1 / 3)


def test_auto_box_iou_threshold_is_strict() -> None:
    assert metrics.best_proposal_hit([0.9, 0.1], [0.5, 0.9]) == 0.0
    assert metrics.best_proposal_hit([0.9, 0.1], [0.51, 0.0]) == 1.0


def test_auto_box_ties_go_to_the_first_proposal() -> None:
    assert metrics.best_proposal_hit([0.7, 0.7], [0.2, 0.8]) == 0.0
    assert metrics.best_proposal_hit([0.7, 0.7], [0.8, 0.2]) == 1.0
    assert metrics.image_auto_accuracy([([1, 0], [0.6, 0.0]), ([0, 0], [0.0, 0.9])]) == (0.5, 1.0)


# -- comparison -----------------------------------------------------------------------------
def test_tiebreak_is_numpy_legacy_seed_1() -> None:
    state = np.random.get_state()
    try:
        np.random.seed(1)
        expected = np.random.random(size=10) / 1e9
    finally:
        np.random.set_state(state)
    np.testing.assert_array_equal(metrics.TIEBREAK, expected)


def test_constant_predictor_is_ordered_by_the_offsets() -> None:
    # offsets order the positions 2 < 0 < 1: against labels [3, 2, 1] two of three pairs agree
    assert metrics.pairwise_accuracy([0.0, 0.0, 0.0], [3, 2, 1]) == pytest.approx(1 / 3)
    assert metrics.pairwise_accuracy([5.0, 5.0], [2, 2]) == 0.0  # no informative pair


def test_human_and_oracle_hand_computed() -> None:
    out = metrics.source_scores([0.0, 0.0, 0.0], [3, 1, 2], [3, 2, 1])
    assert out["human"] == pytest.approx(1 / 3)
    assert out["oracle"] == pytest.approx(2 / 3)
    # the constant model: +1/3 against annot2 [3,2,1], -1/3 against annot1 [3,1,2]
    assert metrics.pairwise_accuracy([0.0] * 3, [3, 1, 2]) == pytest.approx(-1 / 3)
    assert out["accuracy"] == pytest.approx(0.0)


def _reference_pairwise(pred: list[float], label: list[float]) -> float:
    """The published definition written as a plain double loop."""
    tb = np.asarray(pred, dtype=np.float64) + metrics.TIEBREAK[: len(pred)]
    correct = total = 0
    for a in range(len(label)):
        for b in range(a + 1, len(label)):
            if label[a] == label[b]:
                continue
            total += 1
            correct += int((label[a] < label[b]) == (tb[a] < tb[b]))
    return (correct / total - 0.5) * 2 if total else 0.0


@pytest.mark.parametrize("seed", range(20))
def test_pairwise_accuracy_matches_the_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 11))
    label = rng.integers(1, 4, size=n).astype(float).tolist()
    pred = rng.integers(0, 3, size=n).astype(float).tolist()  # many model ties
    assert metrics.pairwise_accuracy(pred, label) == _reference_pairwise(pred, label)


def test_more_than_ten_candidates_is_refused() -> None:
    with pytest.raises(ValueError):
        metrics.pairwise_accuracy([0.0] * 11, [1] * 11)
