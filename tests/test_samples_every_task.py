"""samples.html of every task of the first-party dataset packages (Sherlock, CoSIm, NL-EYE, VAR,
WHOOPS!, BlackSwan), each run once by the random model on its package's synthetic corpus, opened in one
headless Chromium. On every page: no element wider than its sample's card, no table cell holding
an object's JSON, only the filters the samples support (right and wrong where some sample has a
verdict; sherlock-comparison's "disagrees with humans" instead), no absolute path, and the
per-sample figures on the scale of results.json (their mean is the run's figure). The runs'
compare pages beside the papers' rows: a synthetic run is never drawn on one bar chart with a
paper row, and the page says why.

Here rather than in abduct-report's tests: the tasks come from the dataset packages, which the
report's own test environment does not install."""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from abduct.host import get_registry
from conftest import abduct

# task spec -> its corpus. Options keep each run to a second or two (METEOR starts Java for each call).
TASKS = {
    "sherlock-retrieval": "sherlock", "sherlock-localization": "sherlock", "sherlock-comparison": "sherlock",
    "cosim": "cosim",
    "nleye-pairs": "nleye", "nleye-triplet": "nleye", "nleye-explanation": "nleye",
    "var,meteor=false": "var", "var-explanation,meteor=false,frames=false": "var",
    "var-premise,meteor=false,frames=false": "var",
    "whoops-identification": "whoops", "whoops-matching": "whoops", "whoops-vqa": "whoops",
    "blackswan-mcq": "blackswan", "blackswan-yn": "blackswan",
}
# the tasks whose pages are checked elsewhere, and why not here
ELSEWHERE = {
    "sherlock-generation": "the generic view (its texts); METEOR, which it cannot leave out, costs ~10 s of Java",
    "whoops-explanation": "needs a judge or a BERT (~20 s); abduct-whoops' tests check its view's figures",
    "whoops-captioning": "whoops-vqa's view (an answer beside its references); the PTB tokenizer's Java costs ~5 s",
    "blackswan-gen": "needs a BERT (~15 s); abduct-blackswan's test_gen_task.py checks its records and view",
}
# each corpus's synth command after ``abduct CORPUS synth`` ({out}: its folder)
CORPORA = {"sherlock": ["--out", "{out}", "--images", "24", "--chunk-size", "20"], "var": ["--out", "{out}", "--examples", "8"],
           "cosim": ["--out", "{out}", "--train", "4", "--val", "12"], "nleye": ["--out", "{out}", "--samples", "12"],
           "whoops": ["--out", "{out}", "--images", "10"], "blackswan": ["--out", "{out}", "--videos", "4"]}
PLUGINS = {"sherlock", "cosim", "nleye", "var", "whoops", "blackswan"}  # the first-party dataset packages' plugins
# where a per-sample figure of the view must average to the run's (units.json: a mean of them)
SCALE_CHECKED = {"sherlock-comparison", "sherlock-localization", "var", "var-explanation", "var-premise",
                 "nleye-explanation"}


def _name(task: str) -> str:
    return task.split(",")[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("every-task")
    for corpus, options in CORPORA.items():
        done = abduct(corpus, "synth", *(o.format(out=work / corpus) for o in options))
        assert done.returncode == 0, done.stderr
    out = {}
    for task, corpus in TASKS.items():
        done = abduct("eval", task, "--model", "random", "--data", str(work / corpus), "--out", str(work / _name(task)),
                      "--quiet", "--no-cache", "--ci-resamples", "0")
        assert done.returncode == 0, done.stderr
        out[_name(task)] = work / _name(task)
    return out


@pytest.fixture(scope="module")
def tab() -> Iterator[Any]:
    from abduct_testing.browser import browser_or_skip, samples_browser

    with samples_browser(browser_or_skip()) as opened:
        opened.page.set_viewport_size({"width": 1280, "height": 900})
        yield opened


def test_every_first_party_task_is_here() -> None:
    registered = {c.registration.name for c in get_registry().components("task") if c.plugin in PLUGINS}
    assert registered == {_name(t) for t in TASKS} | set(ELSEWHERE)


# In the page: what overflows its sample's card, the fields cells that hold JSON, the filters offered.
MEASURE = """() => {
  const wide = [];
  for (const card of document.querySelectorAll('.sample')) {
    const c = card.getBoundingClientRect();
    for (const e of card.querySelectorAll('*')) {
      const r = e.getBoundingClientRect();
      if (r.width > 0 && (r.left < c.left - 1 || r.right > c.right + 1))
        wide.push(card.dataset.sampleId + ': ' + e.tagName.toLowerCase() + ' ' + Math.round(r.right - c.right) + ' px over');
    }
  }
  const json = Array.from(document.querySelectorAll('table.fields td')).map(td => td.textContent.trim())
    .filter(t => /^[\\[{]/.test(t));
  const only = document.getElementById('f-only');
  return {wide, json, shows: only ? Array.from(only.options).map(o => o.textContent) : ['all'],
          wider: document.documentElement.scrollWidth > window.innerWidth};
}"""


@pytest.mark.parametrize("task", [_name(t) for t in TASKS])
def test_samples_page_fits_filters_and_paths(runs: dict[str, Path], tab: Any, task: str) -> None:
    from abduct_testing.browser import page_views, view

    run = runs[task]
    views = page_views(run)
    state = view(tab, run / "samples.html")
    found = tab.page.evaluate(MEASURE)
    assert found["wide"] == [] and not found["wider"], found["wide"][:5]
    assert found["json"] == [], found["json"][:5]  # nested fields are rows of their own, lists comma-separated
    verdicts = any(isinstance(v.get("correct"), bool) for v in views)
    flags = list(dict.fromkeys(f for v in views for f in v.get("flags") or {}))
    assert found["shows"] == ["all", *(["wrong", "right"] if verdicts else []), *flags]
    if not verdicts:  # a link made for another task's samples shows them all and says so, never an empty page
        wrong = view(tab, run / "samples.html", "only=wrong")
        assert wrong.count == len(views) > 0 and tab.page.locator("#refused").is_visible()
    page = (run / "samples.html").read_text(encoding="utf-8")
    for absolute in (str(run.parent), tempfile.gettempdir() + "/", str(Path.home()) + "/"):
        assert absolute not in page, f"{absolute} in {task}'s samples.html"
    assert state.console_errors == [] and state.outside_requests == [] and state.broken_images == []


def test_comparison_samples_are_flagged_by_agreement_not_right_or_wrong(runs: dict[str, Path], tab: Any) -> None:
    from abduct_testing.browser import page_views, view

    run = runs["sherlock-comparison"]
    views = page_views(run)
    records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    assert all(v["correct"] is None for v in views)
    disagree = view(tab, run / "samples.html", "only=is:disagrees with humans")
    assert sorted(disagree.ids) == sorted(r["source"] for r in records if r["accuracy"] < 0)
    assert 0 < disagree.count < len(views)  # the synthetic corpus has both kinds


def _per_sample(view: dict[str, Any], metric: str) -> float | None:
    """The view's figure named ``metric``: its score, or a field of that name (``metrics.<name>`` too)."""
    if view.get("score_name") == metric and view.get("score") is not None:
        return float(view["score"])
    fields = view.get("fields") or {}
    found = next((v for k, v in fields.items() if k == metric or k.endswith(f".{metric}")), None)
    return float(found) if isinstance(found, (int, float)) and not isinstance(found, bool) else None


@pytest.mark.parametrize("task", [_name(t) for t in TASKS])
def test_per_sample_figures_are_on_the_reports_scale(runs: dict[str, Path], task: str) -> None:
    """Where a headline figure is the mean of per-sample values (units.json) and every view shows
    that value, the views' mean is the figure results.json reports: same scale, same numbers."""
    from abduct_testing.browser import page_views

    run = runs[task]
    views = page_views(run)
    results = json.loads((run / "results.json").read_text())
    units = json.loads((run / "units.json").read_text())
    checked = []
    for metric, unit in units.items():
        if "." in metric or unit.get("aggregate") not in ("mean", "ratio") or metric not in results["metrics"]:
            continue
        values = [_per_sample(v, metric) for v in views]
        if not values or any(x is None for x in values):
            continue
        mean = math.fsum(values) / len(values)  # type: ignore[arg-type]
        assert mean == pytest.approx(results["metrics"][metric], rel=1e-3, abs=0.01), (task, metric)
        checked.append(metric)
    assert bool(checked) is (task in SCALE_CHECKED), (task, checked)


def test_a_synthetic_run_is_never_drawn_beside_the_papers(runs: dict[str, Path], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """sherlock-retrieval on the synthetic corpus (its SYNTHETIC mark; 22 candidates a chunk) and
    sherlock-comparison: the papers' rows stay in the tables, with their conditions, and a note
    says why none is on the bar charts."""
    from abduct_report import comparison as module

    drawn: list[dict[str, Any]] = []
    real_bars = module.bars

    def recording(title: str, groups: dict[str, Any], *rest: Any, **options: Any) -> bytes | None:
        drawn.append(dict(groups))
        return real_bars(title, groups, *rest, **options)

    monkeypatch.setattr(module, "bars", recording)
    runs_here = [runs["sherlock-retrieval"], runs["sherlock-comparison"]]
    found = module.compare(runs_here, resamples=0)
    page = " ".join(module.html_page(found, where=tmp_path).replace("&#x27;", "'").split())
    text = " ".join(module.text_table(found).split())
    assert drawn and not any("(paper)" in name for groups in drawn for name in groups)
    for task in ("sherlock-retrieval", "sherlock-comparison"):
        assert found.task_papers(task) and all(p.conditions.get("data") == "real" for p in found.task_papers(task))
    for shown in (page, text):
        assert "Not comparable with the paper's rows: random: data synthetic, the paper's real" in shown
        assert "ranked among 22 candidates, the paper's among about 1,000" in shown
        assert "left off the bar charts" in shown
