"""Agreement statistics: hand-computed cases (the arithmetic written out), the undefined cases,
and conformance with scikit-learn's ``cohen_kappa_score`` and the ``krippendorff`` package."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abduct_modelkit.agreement import (
    agreement_summary,
    cohen_kappa,
    confusion,
    krippendorff_alpha,
    undefined_reason,
)

Y, N = "yes", "no"


def test_kappa_three_labels_by_hand() -> None:
    a = ["neg", "pos", "neg", "neu", "pos"]
    b = ["neg", "pos", "neg", "neu", "neg"]
    p_o = 4 / 5
    p_e = (2 * 3 + 2 * 1 + 1 * 1) / 5**2  # neg 2x3, pos 2x1, neu 1x1
    assert cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert cohen_kappa(a, b) == pytest.approx(0.6875)
    assert cohen_kappa(b, a) == pytest.approx(cohen_kappa(a, b))  # symmetric


def test_kappa_binary_by_hand() -> None:
    judge = [Y, Y, Y, Y, Y, Y, N, N, N, N]
    human = [Y, Y, Y, Y, Y, N, N, N, N, Y]
    p_o = 8 / 10
    p_e = (6 * 6 + 4 * 4) / 10**2
    assert cohen_kappa(judge, human) == pytest.approx((p_o - p_e) / (1 - p_e))  # 0.28 / 0.48


def test_kappa_prevalence_paradox_by_hand() -> None:
    # 80 % agreement, yet below chance: both say "yes" to 9 of 10, so chance agreement is 0.82
    judge = [Y] * 9 + [N]
    human = [Y] * 8 + [N, Y]
    p_o = 8 / 10
    p_e = (9 * 9 + 1 * 1) / 10**2
    assert cohen_kappa(judge, human) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert cohen_kappa(judge, human) < 0


def _table(cells: list[list[int]]) -> tuple[list[str], list[str]]:
    """Two raters' labels from a 2 x 2 table (rows: rater A +/-, columns: rater B +/-)."""
    a, b = [], []
    for i, row in enumerate(cells):
        for j, count in enumerate(row):
            a += ["+-"[i]] * count
            b += ["+-"[j]] * count
    return a, b


def test_kappa_paradox_tables_of_feinstein_and_cicchetti() -> None:
    # Feinstein and Cicchetti (1990), as an epidemiology textbook reprints them: 85 % agreement
    # in both tables, kappa 0.70 and 0.32
    balanced, skewed = _table([[40, 9], [6, 45]]), _table([[80, 10], [5, 5]])
    p_e = (49 * 46 + 51 * 54) / 100**2
    assert cohen_kappa(*balanced) == pytest.approx((0.85 - p_e) / (1 - p_e)) == pytest.approx(0.70, abs=0.005)
    p_e = (90 * 85 + 10 * 15) / 100**2  # 0.78
    assert cohen_kappa(*skewed) == pytest.approx((0.85 - p_e) / (1 - p_e)) == pytest.approx(0.32, abs=0.005)


@pytest.mark.parametrize(("coders", "published"), [
    (["0 1 0 0 0 0 0 0 1 0", "1 1 1 0 0 1 0 0 0 0"], 0.095),
    (["a a b b d c c c e d d a", "b a b b b c c c e d d d"], 0.692),
    (["1 2 3 3 2 1 4 1 2 * * *", "1 2 3 3 2 2 4 1 2 5 * 3", "* 3 3 3 2 3 4 2 2 5 1 *", "1 2 3 3 2 4 4 1 2 5 1 *"],
     0.743),
])
def test_alpha_of_krippendorffs_worked_examples(coders: list[str], published: float) -> None:
    """Krippendorff's own nominal examples (binary; several values; four coders with gaps, "*"),
    to the three decimals he gives."""
    ratings = [[None if v == "*" else v for v in coder.split()] for coder in coders]
    assert krippendorff_alpha(ratings) == pytest.approx(published, abs=0.0005)


def test_kappa_extremes() -> None:
    assert cohen_kappa([Y, N], [N, Y]) == pytest.approx((0 - 0.5) / (1 - 0.5))  # -1
    assert cohen_kappa([Y, N, Y], [Y, N, Y]) == 1.0
    # one rater constant, the other not: p_e = (3 x 2) / 9, p_o = 2 / 3, so kappa = 0
    assert cohen_kappa([Y, Y, Y], [Y, Y, N]) == pytest.approx(0.0)


@pytest.mark.parametrize(("a", "b", "reason"), [
    ([Y, Y, Y], [Y, Y, Y], "same label"),
    ([], [], "no items"),
])
def test_kappa_undefined_is_nan_with_a_reason(a: list[str], b: list[str], reason: str) -> None:
    assert math.isnan(cohen_kappa(a, b))
    assert reason in (undefined_reason(a, b) or "")
    summary = agreement_summary(a, b)
    assert summary["kappa"] is None and reason in str(summary["kappa_undefined"])


def test_kappa_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="3 labels .* 2"):
        cohen_kappa([Y, Y, N], [Y, N])
    with pytest.raises(ValueError, match="item 1: a missing label"):
        cohen_kappa([Y, None], [Y, N])


def test_alpha_two_raters_by_hand() -> None:
    # units (a,a) (a,b) (b,b) (b,b): coincidences o_aa = 2, o_ab = o_ba = 1, o_bb = 4
    ratings = [["a", "a", "b", "b"], ["a", "b", "b", "b"]]
    n_a, n_b = 2 + 1, 1 + 4
    n = n_a + n_b
    expected = 1 - (n - 1) * (1 + 1) / (2 * n_a * n_b)  # 1 - 7 x 2 / 30
    assert krippendorff_alpha(ratings) == pytest.approx(expected)


def test_alpha_missing_values_by_hand() -> None:
    ratings = [
        ["a", "a", None, "b", None],
        ["a", "b", "b", None, "c"],
        [None, "b", "b", "b", None],
    ]
    # unit 1 (a,a): o_aa += 2/1; unit 2 (a,b,b): o_ab = o_ba += 2/2, o_bb += 2/2; units 3, 4 (b,b):
    # o_bb += 2/1 each; unit 5 has one value, so it is not pairable and "c" never counts
    o_aa, o_ab, o_bb = 2.0, 1.0, 1.0 + 2 + 2
    n_a, n_b = o_aa + o_ab, o_ab + o_bb
    n = n_a + n_b
    expected = 1 - (n - 1) * (2 * o_ab) / (2 * n_a * n_b)  # 1 - 8 x 2 / 36
    assert krippendorff_alpha(ratings) == pytest.approx(expected)
    assert krippendorff_alpha([[*row[:4], float("nan")] for row in ratings]) == pytest.approx(expected)


def test_alpha_undefined_and_bad_input() -> None:
    assert math.isnan(krippendorff_alpha([[Y, Y], [Y, Y]]))  # one value: D_e = 0
    assert math.isnan(krippendorff_alpha([[Y, None], [None, N]]))  # no unit has two values
    assert krippendorff_alpha([[Y, N], [Y, N]]) == 1.0
    with pytest.raises(ValueError, match="rater 1 rates 1 units"):
        krippendorff_alpha([[Y, N], [Y]])
    with pytest.raises(ValueError, match="no raters"):
        krippendorff_alpha([])


def test_confusion_rows_are_truth() -> None:
    table = confusion([Y, Y, N, "maybe"], [Y, N, N, N])
    assert table == {
        "maybe": {"maybe": 0, "no": 0, "yes": 0},
        "no": {"maybe": 1, "no": 1, "yes": 1},
        "yes": {"maybe": 0, "no": 0, "yes": 1},
    }
    with pytest.raises(ValueError, match="read the same"):
        confusion([1, "1"], [1, 1])


def test_summary() -> None:
    summary = agreement_summary([Y, Y, N, N], [Y, N, N, N])
    p_o, p_e = 3 / 4, (2 * 1 + 2 * 3) / 16
    assert summary["n"] == 4
    assert summary["accuracy"] == 75.0  # percent
    assert summary["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
    assert "kappa_undefined" not in summary


labels = st.sampled_from([0, 1, 2])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(labels, labels), min_size=1, max_size=30))
def test_kappa_matches_scikit_learn(pairs: list[tuple[int, int]]) -> None:
    from sklearn.metrics import cohen_kappa_score

    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its undefined case warns; ours is silent nan
        theirs = float(cohen_kappa_score(a, b))
    ours = cohen_kappa(a, b)
    assert (math.isnan(ours) and math.isnan(theirs)) or ours == pytest.approx(theirs)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 4).flatmap(lambda raters: st.lists(
    st.lists(st.one_of(st.none(), labels), min_size=raters, max_size=raters), min_size=1, max_size=12)))
def test_alpha_matches_krippendorff_package(units: list[list[int | None]]) -> None:
    import krippendorff

    ratings = [list(row) for row in zip(*units, strict=True)]
    ours = krippendorff_alpha(ratings)
    data = np.array([[np.nan if v is None else v for v in row] for row in ratings], dtype=float)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # 0/0 when no unit is pairable: it warns, ours is silent nan
            theirs = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    except ValueError:  # the package refuses a single value in the domain; we return nan
        assert math.isnan(ours)
        return
    assert (math.isnan(ours) and math.isnan(theirs)) or ours == pytest.approx(theirs)
