"""samples.html of a synthetic NL-EYE run, opened in headless Chromium: the count under each
filter, every image loaded from the thumbnails beside the page, no console error, no request
leaving the machine. Skipped, with the reason, where chromium or playwright is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct_nleye.synth import synthesize
from abduct_testing import main
from abduct_testing.browser import browser_or_skip, samples_browser, view


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nleye-samples")
    data = synthesize(root / "data", samples=60, seed=1)
    out = root / "run"
    assert main(["eval", "nleye-triplet", "--model", "random", "--data", str(data), "--out", str(out), "--quiet"]) == 0
    return out


def test_run_writes_a_linked_samples_page_with_thumbnails(run: Path) -> None:
    assert 'href="samples.html"' in (run / "report.html").read_text()
    page = (run / "samples.html").read_text()
    assert "http://" not in page.replace("http://example", "") and "https://" not in page.replace("https://example", "")
    # premise and two hypotheses per triplet; 48 px PNGs are small enough to be linked as they are
    assert len(list((run / "samples").glob("*.png"))) == 3 * 60


def test_counts_filters_and_images_in_chromium(run: Path) -> None:
    chromium = browser_or_skip()
    records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    wrong = [r["id"] for r in records if not r["consistent"]]
    assert 0 < len(wrong) < len(records)
    with samples_browser(chromium) as page:
        everything = view(page, run / "samples.html")
        assert everything.count == len(records)
        assert everything.ids == [r["id"] for r in records[:50]]  # the first page of 50
        assert everything.images == 3 * 50 and everything.broken_images == []
        only_wrong = view(page, run / "samples.html", "only=wrong")
        assert only_wrong.count == len(wrong) and set(only_wrong.ids) <= set(wrong)
        one = view(page, run / "samples.html", f"q={records[7]['id']}")
        assert one.count == 1 and one.ids == [records[7]["id"]]
        second = view(page, run / "samples.html", "page=2")
        assert second.ids == [r["id"] for r in records[50:]]
        physical = view(page, run / "samples.html", "cat=physical&only=wrong")
        assert 0 < physical.count < only_wrong.count
        for state in (everything, only_wrong, one, second):
            assert state.console_errors == [] and state.outside_requests == []


def test_compare_links_where_two_runs_disagree(run: Path, tmp_path: Path) -> None:
    chromium = browser_or_skip()
    other = tmp_path / "seed5"
    assert main(["eval", "nleye-triplet", "--model", "random", "--seed", "5", "--data", str(run.parent / "data"),
                 "--out", str(other), "--quiet"]) == 0
    html_out = tmp_path / "cmp" / "compare.html"
    html_out.parent.mkdir()
    assert main(["compare", str(run), str(other), "--html", str(html_out)]) == 0
    verdicts = [{json.loads(line)["id"]: json.loads(line)["consistent"]
                 for line in (d / "predictions.jsonl").read_text().splitlines()} for d in (run, other)]
    differ = sorted(i for i in verdicts[0] if verdicts[0][i] != verdicts[1][i])
    assert differ
    page_name = "compare-disagree-nleye-triplet-1.html"
    assert f'href="{page_name}"' in html_out.read_text()
    with samples_browser(chromium) as page:
        shown = view(page, html_out.parent / page_name)
    assert shown.count == len(differ) and sorted(shown.ids) == differ[:50]
    assert shown.images == 3 * len(shown.ids) and shown.broken_images == []  # thumbnails of the run's folder
    assert shown.console_errors == [] and shown.outside_requests == []
