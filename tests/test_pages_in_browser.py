"""Every page a run of a demo's task writes, as a reader sees it: report.html, samples.html and the
compare page (two seeds of the random model) of Sherlock retrieval, localization and comparison,
VAR explanation, CoSIm, NL-EYE, WHOOPS! and BlackSwan MCQ, each on its package's synthetic corpus, opened in one
headless Chromium. On every page: no text box over another, no element wider than its card, no
empty panel, no console error. The plots are PNGs, so their text is measured in matplotlib, on
the figures the pages draw (``abduct_report.panels.figure_problems``).

Here rather than in abduct-report's tests: the tasks come from the dataset packages, which the
report's own test environment does not install."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import abduct

# task spec -> (its corpus, the synth command's size options); one task of each demo section and dataset
TASKS = {
    "sherlock-retrieval": "sherlock", "sherlock-localization": "sherlock", "sherlock-comparison": "sherlock",
    "var-explanation,meteor=false": "var",  # the demo's VAR task: METEOR's Java start-up would be most of a run
    "cosim": "cosim", "nleye-triplet": "nleye", "whoops-matching": "whoops", "blackswan-mcq": "blackswan",
}
# each corpus's synth command after ``abduct CORPUS synth`` ({out}: its folder)
CORPORA = {"sherlock": ["--out", "{out}", "--images", "30", "--chunk-size", "8"], "var": ["--out", "{out}", "--examples", "8"],
           "cosim": ["--out", "{out}", "--train", "4", "--val", "24"], "nleye": ["--out", "{out}", "--samples", "16"],
           "whoops": ["--out", "{out}", "--images", "10"], "blackswan": ["--out", "{out}", "--videos", "4"]}
SEEDS = (0, 1)
RESAMPLES = "200"  # the intervals' and paired tests' resamples: what is drawn, not how precisely
WINDOW = {"width": 1280, "height": 900}


def _name(task: str) -> str:
    return task.split(",")[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Path]]:
    """``{task: {"report": ..., "samples": ..., "compare": ...}}``: the pages of every task, its
    two seeds' runs compared."""
    work = tmp_path_factory.mktemp("pages")
    for corpus, options in CORPORA.items():
        done = abduct(corpus, "synth", *(o.format(out=work / corpus) for o in options))
        assert done.returncode == 0, done.stderr
    pages: dict[str, dict[str, Path]] = {}
    for task, corpus in TASKS.items():
        outs = [work / f"{_name(task)}-{seed}" for seed in SEEDS]
        for seed, out in zip(SEEDS, outs):
            done = abduct("eval", task, "--model", "random", "--data", str(work / corpus), "--out", str(out),
                          "--seed", str(seed), "--ci-resamples", RESAMPLES, "--quiet")
            assert done.returncode == 0, done.stderr
        compared = work / f"compare-{_name(task)}" / "compare.html"
        done = abduct("compare", *map(str, outs), "--html", str(compared), "--ci-resamples", RESAMPLES)
        assert done.returncode == 0, done.stderr
        pages[_name(task)] = {"report": outs[0] / "report.html", "samples": outs[0] / "samples.html",
                              "compare": compared}
    return pages


@pytest.fixture(scope="module")
def tab() -> Iterator[Any]:
    from abduct_testing.browser import browser_or_skip, samples_browser

    with samples_browser(browser_or_skip()) as opened:
        opened.page.set_viewport_size(WINDOW)
        yield opened


# Run in the page: every <details> opened, then what a reader would trip on.
MEASURE = """() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const problems = [];
  const short = t => t.trim().replace(/\\s+/g, ' ').slice(0, 40);
  // text boxes: each line of each visible text node
  const boxes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, owner = node.parentElement;
    if (!node.textContent.trim() || !owner || !owner.checkVisibility({visibilityProperty: true})) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const r of range.getClientRects())
      if (r.width > 0.5 && r.height > 0.5) boxes.push({r, node, text: short(node.textContent)});
  }
  boxes.sort((a, b) => a.r.top - b.r.top);
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length && boxes[j].r.top < boxes[i].r.bottom; j++) {
      const a = boxes[i].r, b = boxes[j].r;
      if (boxes[i].node !== boxes[j].node && Math.min(a.right, b.right) - Math.max(a.left, b.left) > 2
          && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 2)
        problems.push(`text "${boxes[i].text}" overlaps "${boxes[j].text}"`);
    }
  // widths: every element inside its card (the nearest figure, sample, table cell, list item or the
  // body); what sits in a scrolling box may be wider than it, the box itself may not
  const cards = 'figure, .sample, td, th, li, details, .scroll, body';
  const scrolls = e => ['auto', 'scroll', 'hidden'].includes(getComputedStyle(e).overflowX);
  for (const e of document.body.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || !e.checkVisibility()) continue;
    const card = e.parentElement.closest(cards);
    if (!card || (scrolls(card) && card !== e)) continue;
    const c = card.getBoundingClientRect();
    if (r.left < c.left - 1 || r.right > c.right + 1)
      problems.push(`${e.tagName.toLowerCase()} "${short(e.textContent || e.getAttribute('alt') || '')}" `
                    + `(${Math.round(r.left)}-${Math.round(r.right)}) is wider than its ${card.tagName.toLowerCase()} `
                    + `(${Math.round(c.left)}-${Math.round(c.right)})`);
  }
  if (document.documentElement.scrollWidth > window.innerWidth)
    problems.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${window.innerWidth} px window`);
  // empty panels: a figure without a picture or text, an image that did not load, a table without cells
  for (const f of document.querySelectorAll('figure'))
    if (!f.querySelector('img') && !f.textContent.trim()) problems.push('an empty figure');
  for (const i of document.images)
    if (!(i.naturalWidth > 0) || i.getBoundingClientRect().width === 0)
      problems.push(`image ${short(i.alt || i.src)} shows nothing`);
  for (const t of document.querySelectorAll('table'))
    if (!t.querySelector('td')) problems.push(`table "${short(t.textContent)}" has no cells`);
  const samples = document.getElementById('samples');
  if (samples && !samples.querySelector('[data-sample-id]')) problems.push('samples.html shows no sample');
  return problems;
}"""


@pytest.mark.parametrize("kind", ["report", "samples", "compare"])
@pytest.mark.parametrize("task", [_name(t) for t in TASKS])
def test_page_reads_cleanly(runs: dict[str, dict[str, Path]], tab: Any, task: str, kind: str) -> None:
    page = runs[task][kind]
    tab.errors.clear()
    tab.outside.clear()
    tab.page.goto(page.resolve().as_uri())
    tab.page.wait_for_function("Array.from(document.images).every(i => i.complete)")
    problems = tab.page.evaluate(MEASURE)
    assert problems == [], f"{page.name} of {task}: {problems}"
    assert tab.errors == [] and tab.outside == []
    if kind == "report":  # the breakdowns' cells folded away, the plots start near the top
        first = tab.page.evaluate("() => document.querySelector('figure').getBoundingClientRect().top")
        assert first < 1.5 * WINDOW["height"]


@pytest.mark.parametrize("task", [_name(t) for t in TASKS])
def test_plots_have_no_overlapping_text_nor_empty_panels(runs: dict[str, dict[str, Path]], task: str) -> None:
    from abduct_report.panels import figure_problems
    from abduct_report.report_page import plot_figures

    run = runs[task]["report"].parent
    results = json.loads((run / "results.json").read_text())
    records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    figures = [(name, figure) for name, figure in plot_figures(results, records) if figure is not None]
    assert figures
    info = results["metric_info"]
    problems = {name: found for name, figure in figures if (found := figure_problems(figure) + _mixed(figure, info))}
    assert problems == {}


def _mixed(figure: Any, metric_info: dict[str, Any]) -> list[str]:
    """Panels whose metrics (their bars' labels) are declared with different directions or ranges."""
    found = []
    for ax in figure.axes:
        names = sorted({c.get_label() for c in ax.containers if not c.get_label().startswith("_")})
        declared = {(e["better"], tuple(e["range"] or ())) for n in names if isinstance(e := metric_info.get(n), dict)}
        if len(declared) > 1:
            found.append(f"panel {ax.get_title()!r} puts {names} on one axis: {sorted(map(str, declared))}")
    return found
