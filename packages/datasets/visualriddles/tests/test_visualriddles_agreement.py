"""Krippendorff's α across several judges of ``visualriddles-judge``: one run a judge model,
``abduct compare`` of the runs. Three fake judges of known verdicts on the synthetic release's
answers (per riddle: the right colour, a wrong one, "I am not sure."; people label them yes, no,
no), every figure written out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct_report.comparison import compare, html_page, text_table
from abduct_report.judge_agreement import across_runs
from conftest import evaluate

RIDDLES = 21  # the corpus fixture's; three judged answers each


def test_alpha_across_judge_runs_by_hand(corpus: Path, tmp_path: Path) -> None:
    # per riddle: knows says (yes, no, unparsed), agrees (yes, no, no) = people, says-yes (yes, yes, yes)
    runs = {name: tmp_path / name for name in ("knows", "agrees", "says-yes")}
    for name, out in runs.items():
        results = evaluate(corpus, out, "visualriddles-judge", name)
        assert results["details"]["judge_agreement"]["across_runs"]["label"] == "verdict"
    own = json.loads((runs["knows"] / "results.json").read_text())
    model = own["details"]["judge_agreement"]["judges"][0]
    assert model["judge"] == "model" and model["human"]["kappa"] == pytest.approx(own["metrics"]["kappa"])
    evaluate(corpus, tmp_path / "free", "visualriddles-judge,reference=free", "says-yes")  # other conditions

    block = across_runs([(name, json.loads((out / "results.json").read_text()), out) for name, out in
                         [*runs.items(), ("free", tmp_path / "free")]])
    assert block is not None and block["runs"] == ["knows", "agrees", "says-yes"] and block["left_out"] == ["free"]
    assert block["items"] == 3 * RIDDLES and block["not_in_every_run"] == 0
    # alpha over the three judges; per riddle the units (y,y,y), (n,n,y), (u,n,y), m = 3, pairs weighted 1/2:
    # o_yy = 3, o_nn = 1, o_ny = o_yn = 1 + 1/2, o_nu = o_un = o_uy = o_yu = 1/2; n_y = 5, n_n = 3, n_u = 1
    n_y, n_n, n_u = 5 * RIDDLES, 3 * RIDDLES, 1 * RIDDLES
    disagree = (1.5 + 1.5 + 0.5 * 4) * RIDDLES
    n = n_y + n_n + n_u
    assert block["alpha"] == pytest.approx(1 - (n - 1) * disagree / (2 * (n_y * n_n + n_y * n_u + n_n * n_u)))
    # people as a fourth rater (they label as agrees does), m = 4, weights 1/3: (y,y,y,y) o_yy = 4;
    # (n,n,y,n) o_nn = 2, o_ny = o_yn = 1; (u,n,y,n) o_nn = 2/3, o_nu = o_un = o_ny = o_yn = 2/3, o_uy = o_yu = 1/3
    n_y, n_n, n_u = 6 * RIDDLES, 5 * RIDDLES, 1 * RIDDLES
    disagree = (2 + 4 * 2 / 3 + 2 / 3) * RIDDLES
    n = n_y + n_n + n_u
    assert block["alpha_with_people"] == pytest.approx(
        1 - (n - 1) * disagree / (2 * (n_y * n_n + n_y * n_u + n_n * n_u)))
    agrees, says_yes = block["pairs"]
    # agrees vs knows: same on 2 of 3; knows yes/no/unparsed 1/3 each, agrees yes 1/3, no 2/3:
    # p_e = 1/3 x 1/3 + 1/3 x 2/3 = 1/3, kappa = (2/3 - 1/3) / (2/3); both say yes to a third: no difference
    assert agrees["agreement"] == pytest.approx(200 / 3) and agrees["kappa"] == pytest.approx(0.5)
    assert agrees["difference"] == pytest.approx(0.0) and agrees["both_read"] == 3 * RIDDLES
    # says-yes vs knows: same on the right answers only (1/3 = p_e): kappa 0; yes rate 100 against 100/3
    assert says_yes["kappa"] == pytest.approx(0.0) and says_yes["difference"] == pytest.approx(200 / 3)
    assert says_yes["low"] < says_yes["difference"] < says_yes["high"]  # items resampled, with their differences

    comparison = compare(list(runs.values()), published=False, resamples=0)
    text = text_table(comparison)
    assert "### Judge agreement across runs (each run's model one judge; 63 items every run scored)" in text
    assert f"across the 3 runs: {block['alpha']:.3f}; with people as one more rater: " \
           f"{block['alpha_with_people']:.3f}" in text
    assert "κ 0.500" in text and "score difference +66.7" in text
    page = html_page(comparison)
    assert "Judge agreement across runs" in page and f"{block['alpha']:.3f}" in page
