"""report.html beside report.md for every run (self-contained: every image inlined), plots from
the ``by_*`` / ``per_*`` / ``histograms`` / ``examples`` shapes, written without plots when
matplotlib is absent; and ``abduct compare`` in the terminal and as an HTML page."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import abduct_report.report_page
from abduct.host import Registry, main
from abduct_report.report_page import html_report
from abduct_testing import make_images


class Page(HTMLParser):
    """What a browser would fetch: every src/href and every <img>."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.images: list[str] = []
        self.fetched: list[str] = []
        self.tags: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if tag == "img":
            self.images.append(values.get("src") or "")
        if tag in ("script", "link", "iframe", "source") and (values.get("src") or values.get("href")):
            self.fetched.append(str(values.get("src") or values.get("href")))


def _self_contained(text: str) -> Page:
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    page = Page(text)
    assert not page.fetched, page.fetched
    assert all(src.startswith(("data:image/png;base64,", "data:image/jpeg;base64,")) for src in page.images)
    return page


def _results(tmp_path: Path) -> dict[str, Any]:
    (image,) = make_images(tmp_path / "img", 1, size=(80, 60))
    return {
        "task": "shape-demo", "model": {"spec": "random"}, "data": {"dir": "d"}, "split": "val", "seed": 0,
        "limit": None, "timings": {"total_seconds": 1.0},
        "metrics": {"accuracy": 50.0, "n": 4, "by_category": {"a": {"accuracy": 40.0, "n": 2}, "b": {"accuracy": 60.0, "n": 2}}},
        "details": {"per_position": [0.1, 0.4, 0.2], "histograms": ["rank"],
                    "examples": [{"image": str(image), "boxes": [[4, 4, 20, 10]], "title": "clue: $x$ <b>",
                                  "lines": ["first", "second"]},
                                 {"image": str(tmp_path / "missing.jpg"), "boxes": [], "title": "gone", "lines": []}]},
        "metric_info": {"accuracy": {"better": "higher", "range": [0, 100], "chance": None}},
    }


def test_every_shape_becomes_an_embedded_image(tmp_path: Path) -> None:
    predictions = [{"id": str(i), "rank": float(i % 3 + 1)} for i in range(9)]
    page = _self_contained(html_report(_results(tmp_path), predictions))
    # by_category, per_position, the rank histogram; one example (the missing image is dropped)
    assert [src.split(";")[0] for src in page.images] == ["data:image/png"] * 3 + ["data:image/jpeg"]
    text = html_report(_results(tmp_path), predictions)
    assert "accuracy ↑" in text and "clue: $x$ &lt;b&gt;" in text


def test_without_matplotlib_the_page_is_written_without_plots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(abduct_report.report_page, "have_matplotlib", lambda: False)
    text = html_report(_results(tmp_path), [])
    page = _self_contained(text)
    assert [src.split(";")[0] for src in page.images] == ["data:image/jpeg"]  # the example needs only Pillow
    assert "pip install matplotlib" in text


def test_every_run_writes_report_html(toy_registry: Registry, toy_data: Path, tmp_path: Path) -> None:
    assert main(["eval", "toy-choice", "--model", "random", "--data", str(toy_data), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    page = _self_contained((tmp_path / "o" / "report.html").read_text())
    assert "table" in page.tags and (tmp_path / "o" / "report.md").is_file()


def _run(data: Path, out: Path, model: str) -> Path:
    assert main(["eval", "toy-choice", "--model", model, "--data", str(data), "--out", str(out), "--quiet"]) == 0
    return out


def test_compare_side_by_side_with_differences(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    first = _run(toy_data, tmp_path / "a", "random")
    second = _run(toy_data, tmp_path / "b", "constant")
    results = json.loads((second / "results.json").read_text())
    results["metric_info"] = {"accuracy": {"better": "higher", "range": [0, 100], "chance": 25.0}}
    (second / "results.json").write_text(json.dumps(results))
    capsys.readouterr()
    html_out = tmp_path / "cmp" / "compare.html"
    assert main(["compare", str(first), str(second), "--html", str(html_out)]) == 0
    out = capsys.readouterr().out
    a = json.loads((first / "results.json").read_text())["metrics"]["accuracy"]
    b = results["metrics"]["accuracy"]
    assert "## toy-choice" in out and "random" in out and "constant" in out
    row = next(line for line in out.splitlines() if line.split()[:1] == ["constant"])
    assert f"{b - a:+.4g}" in row.split()  # its difference from the first run, in its row
    page = _self_contained(html_out.read_text())
    assert len(page.images) >= 1  # a bar chart per metric
    verdict = "better" if b > a else "worse" if b < a else ""
    if verdict:
        assert f'class="{verdict}"' in html_out.read_text()


def test_compare_refuses_what_is_not_a_finished_run(toy_registry: Registry, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path)]) == 2
    assert "holds no finished run" in capsys.readouterr().err
    (tmp_path / "results.json").write_text('{"task": "x"}')
    assert main(["compare", str(tmp_path)]) == 2
    assert "not an abduct results file" in capsys.readouterr().err


def _long_groups(n: int) -> dict[str, dict[str, float]]:
    return {f"a rather long group name {i}": {"accuracy": 10.0 + i} for i in range(n)}


def _label_boxes(figure: Any) -> list[Any]:
    renderer = figure.canvas.get_renderer()
    return [t.get_window_extent(renderer) for ax in figure.axes for t in ax.get_xticklabels()
            if t.get_visible() and t.get_text()]


@pytest.mark.parametrize("groups", [_long_groups(3), _long_groups(12), _long_groups(40),
                                    # names that just fit side by side (NL-EYE's interval plot): they must not touch
                                    {"consistency_accuracy": 25.0, "order1_accuracy": 50.0, "order2_accuracy": 50.0}])
def test_x_labels_neither_overlap_nor_leave_the_figure(groups: dict[str, Any]) -> None:
    from abduct_report.report_page import draw_bars

    figure = draw_bars("t", groups)
    boxes = sorted(_label_boxes(figure), key=lambda b: b.x0)
    assert boxes and all(a.x1 + 3 <= b.x0 for a, b in zip(boxes, boxes[1:]))  # a gap between words
    width, height = figure.canvas.get_width_height()
    assert all(b.x0 >= -0.5 and b.x1 <= width + 0.5 and b.y0 >= -0.5 for b in boxes)


def test_metrics_of_other_scales_get_their_own_panel() -> None:
    from abduct_report.report_page import draw_bars

    figure = draw_bars("t", {"a": {"cider": 812.0, "meteor": 31.0, "bleu_4": 22.0}, "b": {"cider": 640.0, "meteor": 28.0, "bleu_4": 19.0}})
    panels = [sorted(ax.get_legend_handles_labels()[1]) or [ax.get_title()] for ax in figure.axes]
    assert panels == [["cider"], ["bleu_4", "meteor"]]


def test_wide_plots_stay_inside_their_figure_in_a_browser(tmp_path: Path) -> None:
    from abduct_testing.browser import browser_or_skip, samples_browser

    chromium = browser_or_skip()
    results = _results(tmp_path)
    results["metrics"]["by_group"] = _long_groups(30)
    results["details"]["per_chunk"] = {str(k): {"im2txt": 3.0 + k, "txt2im": 2.0 + k, "p_at_1": 30.0 - k} for k in range(12)}
    page = tmp_path / "report.html"
    page.write_text(html_report(results, [{"id": "1", "rank": 1.0}]))
    with samples_browser(chromium) as tab:
        tab.page.goto(page.as_uri())
        boxes = tab.page.evaluate("""() => Array.from(document.querySelectorAll('figure')).map(f => {
            const r = f.getBoundingClientRect(), i = f.querySelector('img').getBoundingClientRect();
            return {f: [r.left, r.top, r.right, r.bottom], i: [i.left, i.top, i.right, i.bottom]}; })""")
    assert len(boxes) >= 5
    for box in boxes:  # each image inside its figure
        (fl, ft, fr, fb), (il, it, ir, ib) = box["f"], box["i"]
        assert fl - 0.5 <= il and ir <= fr + 0.5 and ft - 0.5 <= it and ib <= fb + 0.5, box
    tops = [box["f"][1] for box in boxes]
    assert len(set(tops)) < len(tops)  # narrow plots still two to a row
    for i, a in enumerate(boxes):  # and no figure over another
        for b in boxes[i + 1:]:
            (al, at, ar, ab), (bl, bt, br, bb) = a["f"], b["f"]
            assert ar <= bl + 0.5 or br <= al + 0.5 or ab <= bt + 0.5 or bb <= at + 0.5, (a, b)


def _finished(directory: Path, spec: str, accuracy: float, instances: int) -> Path:
    directory.mkdir(parents=True)
    (directory / "results.json").write_text(json.dumps({
        "task": "shape-demo", "model": {"spec": spec}, "split": "val",
        "metrics": {"accuracy": accuracy, "instances": instances},
        "metric_info": {"accuracy": {"better": "higher", "range": [0, 100], "chance": None},
                        "instances": {"better": None, "range": [0, None], "chance": None}}}))
    return directory


def test_compare_page_counts_get_no_delta_nor_bars_and_paths_are_cut(toy_registry: Registry, tmp_path: Path) -> None:
    from abduct_report.comparison import compare, html_page, text_table

    first = _finished(tmp_path / "a", "random", 40.0, 100)
    second = _finished(tmp_path / "b", f"clip:{tmp_path}/train/ckpt/best.pt", 55.0, 120)
    comparison = compare([first, second], toy_registry, resamples=0)
    text = html_page(comparison, where=tmp_path)
    assert "(Δ +15" in text and "(Δ +20" not in text and "(Δ +20" not in text_table(comparison)
    assert str(tmp_path) not in text and "clip:…/ckpt/best.pt" in text
    assert "<title>abduct compare: shape-demo</title>" in text
    assert len(_self_contained(text).images) == 1  # accuracy's bars; none for the count


def test_narrow_plots_share_a_row_and_wide_ones_take_it(tmp_path: Path) -> None:
    from abduct_report.report_page import figure_html

    narrow, wide = bars_png(3), bars_png(30)
    assert '<figure><img' in figure_html("a", narrow) and '<figure class="wide">' in figure_html("b", wide)


def bars_png(groups: int) -> bytes:
    from abduct_report.report_page import bars

    png = bars("t", _long_groups(groups))
    assert png is not None
    return png


def test_turned_labels_leave_the_plot_its_height() -> None:
    from abduct_report.report_page import draw_bars

    few, many = draw_bars("t", _long_groups(3)), draw_bars("t", _long_groups(40))
    renderer = many.canvas.get_renderer()
    assert any(t.get_rotation() for t in many.axes[0].get_xticklabels())  # they had to turn
    plot_height = [f.axes[0].get_window_extent(f.canvas.get_renderer()).height for f in (few, many)]
    assert plot_height[1] >= 0.9 * plot_height[0] and renderer is not None


def test_the_legend_stands_under_the_panels_clear_of_every_title() -> None:
    from abduct_report.panels import figure_problems
    from abduct_report.report_page import draw_bars

    rows = {group: {"consistency_accuracy": 25.0 + i, "order1_accuracy": 50.0 - i, "order2_accuracy": 40.0 + 2 * i}
            for i, group in enumerate(("food", "indoor", "outdoor"))}
    figure = draw_bars("t", rows)
    (legend,) = figure.legends
    renderer = figure.canvas.get_renderer()
    box = legend.get_window_extent()
    labels = min(t.get_window_extent(renderer).y0 for ax in figure.axes for t in ax.get_xticklabels() if t.get_text())
    assert 0 <= box.x0 and box.x1 <= figure.bbox.width and box.y1 <= labels  # inside the figure, under the x labels
    assert figure_problems(figure) == []


def test_plots_are_drawn_once_per_process_for_the_same_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated or resumed run gets the same PNG bytes without drawing again; anything that
    changes the picture (values, their order, labels, a number's type, an rcParam, a label
    json would write alike) draws anew."""
    import matplotlib

    from abduct_report import report_page as report

    drawn: list[str] = []
    real = report.plot_figure

    def counting(draw: Any, width: float = report.NARROW, height: float = 3.2) -> Any:
        drawn.append("x")
        return real(draw, width, height)

    monkeypatch.setattr(report, "plot_figure", counting)
    monkeypatch.setattr(report, "_drawn", type(report._drawn)())  # this test's own memory
    groups = {"a": {"accuracy": 40.0, "n": 2}, "b": {"accuracy": 60.0, "n": 2}}
    first = report.bars("t", groups)
    assert first is not None and len(drawn) == 1
    again = report.bars("t", json.loads(json.dumps(groups)))  # equal data, other objects
    assert again == first and len(drawn) == 1
    for other in ({"b": groups["b"], "a": groups["a"]}, {"a": {"accuracy": 41.0}, "b": groups["b"]},
                  {"a": groups["a"], "c": groups["b"]}):
        assert report.bars("t", other) not in (None, first)
    assert len(drawn) == 4
    assert report.bars("t2", groups) != first and len(drawn) == 5
    assert report.bars("t", groups, errors={"a": (30.0, 50.0)}) != first and len(drawn) == 6
    assert report.series("t", [1, 2]) == report.series("t", [1, 2]) and len(drawn) == 7
    report.series("t", [1.0, 2.0])  # another type: drawn, though it looks the same
    assert len(drawn) == 8
    assert report.histogram("rank", [{"rank": 1}, {"rank": 2}]) == report.histogram("rank", [{"rank": 1.0}, {"rank": 2}])
    assert len(drawn) == 9
    report.bars("t", {1: 1.0, "x": 2.0})
    report.bars("t", {"1": 1.0, "x": 2.0})
    report.bars("t", {1: 1.0, "x": 2.0})  # a key json would write as "1": never remembered
    assert len(drawn) == 12
    monkeypatch.setitem(matplotlib.rcParams, "axes.facecolor", "#eeeeee")
    assert report.bars("t", groups) != first and len(drawn) == 13


def test_a_bar_whose_interval_excludes_its_value_is_drawn_without_a_whisker() -> None:
    """A corpus metric's bootstrap interval may lie beside its value (BLEU's resamples all above
    it): the bar is drawn, its whisker left out rather than drawn to a wrong end."""
    from abduct_report import report_page as report

    groups = {"a": {"bleu": 10.0}, "b": {"bleu": 20.0}}
    drawn = report.bars("t", groups, errors={"a": (12.0, 15.0), "b": (18.0, 24.0)})
    assert drawn is not None and drawn != report.bars("t", groups)
