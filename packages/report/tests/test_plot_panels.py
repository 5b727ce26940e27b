"""The plots of report.html cannot mislead: metrics share a panel only with the same declared
direction and range, categories are bars (points beyond MAX_BARS), never lines, bars rise from a
stated baseline with whiskers, n and chance marks, a metric that is the same in every group gets
no panel, and a breakdown's cells leave the headline table for a folded table of their own."""

from __future__ import annotations

import re
from typing import Any

import pytest

from abduct_report.panels import GUIDE, figure_problems
from abduct_report.report_page import MAX_BARS, draw_bars, html_report, planned_plots

RANK = {"better": "lower", "range": [1.0, None], "chance": 4.5}
PERCENT = {"better": "higher", "range": [0.0, 100.0], "chance": 25.0}
COUNT = {"better": None, "range": [0.0, None], "chance": None}
BOOTSTRAP = {"level": 0.95, "method": "percentile bootstrap", "resamples": 1000, "unit": "instance"}


def _panels(figure: Any) -> list[list[str]]:
    return [sorted({c.get_label() for c in ax.containers if not c.get_label().startswith("_")}) for ax in figure.axes]


def test_ranks_and_percentages_never_share_an_axis() -> None:
    chunks = {str(k): {"im2txt": 4.0 + k / 10, "txt2im": 3.0 + k / 10, "p_at_1": 20.0 + k, "n": 8} for k in range(3)}
    figure = draw_bars("t", chunks, info={"im2txt": RANK, "txt2im": RANK, "p_at_1": PERCENT, "n": COUNT})
    assert _panels(figure) == [["im2txt", "txt2im"], ["p_at_1"]]
    ranks, percent = figure.axes
    assert ranks.get_ylim()[0] == 1.0 and "lower is better" in ranks.get_ylabel() and "from 1" in ranks.get_ylabel()
    assert percent.get_ylim()[0] == 0.0 and "higher is better" in percent.get_ylabel()
    assert [t.get_text() for t in percent.get_xticklabels()] == ["0\nn=8", "1\nn=8", "2\nn=8"]
    assert figure_problems(figure) == []


def test_the_headline_figure_splits_by_direction_and_marks_chance() -> None:
    values = {"im2txt": {"im2txt": 76.0}, "p_at_1": {"p_at_1": 1.2}}
    errors = {"im2txt": (70.0, 80.0), "p_at_1": (0.5, 2.0)}
    figure = draw_bars("t", values, errors, info={"im2txt": RANK, "p_at_1": PERCENT})
    assert _panels(figure) == [["im2txt"], ["p_at_1"]]
    rank_panel = figure.axes[0]
    chance = [c for c in rank_panel.collections if c.get_gid() == GUIDE]
    assert len(chance) == 1 and chance[0].get_segments()[0][0][1] == pytest.approx(4.5)
    assert rank_panel.get_ylim()[0] == 1.0  # the mean rank's own baseline, not 0
    assert any(len(c.get_segments()) for c in rank_panel.collections if c.get_gid() != GUIDE)  # the whisker


def test_categories_are_bars_or_points_never_a_line() -> None:
    few = {f"fold{k}": {"accuracy": 70.0 + k / 10} for k in range(5)}  # 70.0 vs 70.4: no zoomed-in axis
    figure = draw_bars("t", few, info={"accuracy": PERCENT})
    (ax,) = figure.axes
    assert len(ax.patches) == 5 and ax.get_ylim()[0] == 0.0
    assert not [line for line in ax.lines if line.get_gid() != GUIDE and line.get_linestyle() not in ("None", "")]
    many = {str(k): {"accuracy": float(k % 7)} for k in range(MAX_BARS + 5)}
    (points,) = draw_bars("t", many).axes
    assert not points.patches and len(points.collections[0].get_offsets()) == MAX_BARS + 5
    assert figure_problems(points.figure) == []


def test_a_metric_the_same_in_every_group_gets_no_panel_and_counts_none_at_all() -> None:
    groups = {g: {"specificity": s, "ties": 0.0, "unparsed": 0.0, "n": 3} for g, s in (("a", 40.0), ("b", 70.0))}
    figure = draw_bars("t", groups, info={"specificity": PERCENT, "ties": COUNT})
    assert _panels(figure) == [["specificity"]]  # ties: a count; unparsed: 0 everywhere
    only_zeros = {g: {"ties": 0.0} for g in "ab"}
    assert draw_bars("t", only_zeros) is None
    results = _results(details={"by_fold": {g: {"accuracy": 50.0, "n": 2} for g in "ab"}})
    page = html_report(results, [])  # said in the Plots section, with no figure
    assert re.search(r'<p class="note">by_fold: [^<]*; the same in every group, not drawn: accuracy 50</p>', page)
    assert 'alt="by_fold"' not in page


def _results(**extra: Any) -> dict[str, Any]:
    table = {g: {"accuracy": a, "n": n} for g, a, n in (("food", 30.0, 6), ("indoor", 55.0, 7))}
    return {"task": "t", "model": {"spec": "random"}, "data": {"dir": "d"}, "split": "val", "seed": 0, "limit": None,
            "timings": {"total_seconds": 1.0}, "metrics": {"accuracy": 42.0, "n": 13, "by_domain": table},
            "metric_info": {"accuracy": PERCENT, "n": COUNT, "by_domain.food.accuracy": PERCENT,
                            "by_domain.indoor.accuracy": PERCENT, "by_domain.food.n": COUNT, "by_domain.indoor.n": COUNT},
            "intervals": {"by_domain.food.accuracy": {"low": 10.0, "high": 50.0, **BOOTSTRAP, "units": 6},
                          "by_domain.indoor.accuracy": {"low": 30.0, "high": 80.0, **BOOTSTRAP, "units": 7}}, **extra}


def test_breakdown_cells_leave_the_headline_table_for_their_own() -> None:
    page = html_report(_results(), [])
    headline = re.search(r"<table>(.*?)</table>", page, re.S)
    assert headline is not None and "by_domain" not in headline.group(1) and "accuracy ↑" in headline.group(1)
    folded = re.search(r"<details><summary>by_domain: 2 groups, 1 metric</summary>(.*?)</details>", page, re.S)
    assert folded is not None
    assert "<th>n</th><th>accuracy ↑ (chance 25)</th>" in folded.group(1)
    assert "<td>food</td><td>6</td><td>30 [10, 50]</td>" in folded.group(1)


def test_captions_say_what_the_marks_mean_and_what_is_left_out() -> None:
    details = {"per_fold": {f"f{k}": {"accuracy": 40.0 + k, "ties": 0.0, "n": 2} for k in range(3)}}
    plots = {p.name: p for p in planned_plots(_results(details=details), [])}
    assert plots["by_domain"].caption == ("by_domain: whiskers: intervals; n: each group's size; dashed marks: chance")
    assert plots["per_fold"].caption == ("per_fold: n: each group's size; dashed marks: chance; the same in every "
                                         "group, not drawn: ties 0; no intervals recorded for these groups; "
                                         "chance: the overall level")
    for plot in plots.values():
        figure = plot.figure()
        assert figure is not None and figure_problems(figure) == [], plot.name
