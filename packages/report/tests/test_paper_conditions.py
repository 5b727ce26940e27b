"""Paper rows with their conditions: ``published.json`` gives each row its data (real or
synthetic) and, for ranks, its candidates, over the file's own; a run's come from its
results.json. ``abduct compare`` (and the demo's overview, which is compare's page) draws on one
bar chart only the paper rows a run is comparable with, says why the others are left off, gives
every bar a name of its own and a whisker only where there is an interval.

The runs are the toy benchmark's; the paper rows a test plugin's, two of them of one model (as
the Sherlock paper's CLIP ViT-B/16 in Table 2 and in Fig. 5a)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from abduct import PluginError, PublishedRow, hookimpl
from abduct.host import Registry, build_registry, main, reset_registry
from abduct.kit import read_published
from abduct_report import comparison
from abduct_report.conditions import conflicts, distinct_names, fitted_names, run_conditions
from abduct_report.report_page import draw_bars, label
from abduct_testing.toy import ToyPlugin, write_toy_data

LONG = "A model whose name is longer than a bar's label"


class PapersPlugin(ToyPlugin):
    @hookimpl
    def register_published(self) -> list[PublishedRow]:
        def row(model: str, split: str, accuracy: float, source: str, setting: str | None = None) -> PublishedRow:
            return PublishedRow("toy-choice", model, split, {"accuracy": accuracy}, "Paper. Venue 2024", source,
                                setting, conditions={"data": "real"})

        return [row("Big model", "val", 61.0, "Table 1"), row("Big model", "val", 58.0, "Fig. 3", "ablation"),
                row(LONG, "val", 40.0, "Table 1"), row(LONG, "val", 42.0, "Table 4", "fine-tuned"),
                row("Big model", "test", 60.0, "Table 1")]


@pytest.fixture(scope="module")
def registry() -> Iterator[Registry]:
    found = build_registry(extra_plugins=[("toy-papers", PapersPlugin())])
    reset_registry(found)
    yield found
    reset_registry()


@pytest.fixture(scope="module")
def runs(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    work = tmp_path_factory.mktemp("papers")
    data = write_toy_data(work / "toy", items=24)
    out = []
    for seed in (0, 1):
        out.append(work / f"random-{seed}")
        assert main(["eval", "toy-choice", "--model", "random", "--data", str(data), "--out", str(out[-1]), "--quiet",
                     "--seed", str(seed), "--ci-resamples", "100"]) == 0
    return out


@pytest.fixture
def charts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """What compare's bar charts are asked to draw (the charts are still drawn)."""
    drawn: list[tuple[Any, ...]] = []
    real = comparison.bars

    def recording(*args: Any) -> bytes | None:
        drawn.append(args)
        return real(*args)

    monkeypatch.setattr(comparison, "bars", recording)
    return drawn


def test_published_rows_carry_their_conditions_over_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "paper_rows_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    rows = [{"task": "t", "model": "m", "split": "test", "source": "Table 2", "metrics": {"rank": 19.9},
             "conditions": {"candidates": 1000}},
            {"task": "t", "model": "n", "split": "test", "source": "Table 2", "metrics": {"rank": 40.0}}]
    (package / "published.json").write_text(json.dumps({"citation": "C", "conditions": {"data": "real"}, "rows": rows}))
    monkeypatch.syspath_prepend(str(tmp_path))
    found = read_published("paper_rows_pkg")
    assert [dict(r.conditions) for r in found] == [{"data": "real", "candidates": 1000}, {"data": "real"}]
    (package / "published.json").write_text(json.dumps({"citation": "C", "conditions": ["real"], "rows": rows}))
    with pytest.raises(PluginError, match="paper_rows_pkg/published.json is malformed"):
        read_published("paper_rows_pkg")


def test_a_runs_conditions_come_from_its_results(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    results: dict[str, Any] = {"split": "val", "metrics": {"chance_mean_rank": 73.5}, "data": {"dir": str(corpus)}}
    assert run_conditions(results) == {"candidates": 146}  # a chance mean rank of (n + 1) / 2
    (corpus / "SYNTHETIC").write_text("made by a synthesiser\n")
    assert run_conditions(results) == {"candidates": 146, "data": "synthetic"}
    results["details"] = {"conditions": {"candidates": 1004}}  # what the task states wins
    assert run_conditions(results)["candidates"] == 1004


def test_conflicts_are_the_conditions_both_sides_state_and_differ_on() -> None:
    paper = {"data": "real", "candidates": 1000}
    assert conflicts({"data": "synthetic"}, paper) == ["data synthetic, the paper's real"]
    assert conflicts({"candidates": 146}, paper) == ["ranked among 146 candidates, the paper's among about 1,000"]
    assert conflicts({"data": "real", "candidates": 982}, paper) == []  # a test chunk of the paper's own sizes
    assert conflicts({}, paper) == [] and conflicts({"data": "synthetic"}, {}) == []  # nothing known against it


def test_names_stay_distinct_when_cut_for_a_plot() -> None:
    names = ["CLIP ViT-B/16 (paper)", "CLIP ViT-B/16 (paper)", "random"]
    told = distinct_names(names, [["test", "", "Table 2"], ["test", "ablation reference", "Fig. 5a"], ["val"]])
    assert told == ["CLIP ViT-B/16 (paper)", "CLIP ViT-B/16 (paper) [ablation reference]", "random"]
    long = [f"{LONG} (paper) [Table 1]", f"{LONG} (paper) [Table 4]"]
    fitted = fitted_names(long, 30)
    assert len(set(label(n) for n in fitted)) == 2 and all(len(n) <= 30 for n in fitted)


def test_compare_draws_the_comparable_paper_rows_each_with_a_name_of_its_own(
        registry: Registry, runs: list[Path], charts: list[tuple[Any, ...]], tmp_path: Path) -> None:
    found = comparison.compare(runs, registry, resamples=0)
    page = comparison.html_page(found, where=tmp_path)
    assert "Not comparable" not in page
    (title, groups, errors, colours), = [c[:4] for c in charts]
    papers = [name for name, colour in colours.items() if colour == comparison.PAPER_COLOUR]
    assert len(papers) == 4  # the paper's rows on the runs' split (val); its test row is in the table only
    shown = [label(name) for name in groups]
    assert len(set(shown)) == len(shown) == 6  # as the plot writes them: no two alike
    # a whisker for each run (its 95% interval), none for a paper row: no caps without an interval
    assert set(errors) == {name for name, colour in colours.items() if colour == comparison.RUN_COLOUR}
    figure = draw_bars(title, groups, errors, colours)
    whiskers = [segment for ax in figure.axes for container in ax.containers if hasattr(container, "has_yerr")
                for lines in container.lines[2] for segment in lines.get_segments()]
    assert len(whiskers) == 2 and all(abs(s[1][1] - s[0][1]) > 0 for s in whiskers)
    bars = sorted((patch.get_x() + patch.get_width() / 2, patch.get_height()) for ax in figure.axes
                  for patch in ax.patches if patch.get_width() > 0)
    run_xs = {round(x, 6) for x, _ in bars[:2]}  # the runs come first, left to right
    assert {round(s[0][0], 6) for s in whiskers} == run_xs


def test_a_synthetic_run_is_never_drawn_with_a_paper_row(registry: Registry, runs: list[Path],
                                                         charts: list[tuple[Any, ...]], tmp_path: Path) -> None:
    """What the demo's overview does: every run on a synthetic corpus."""
    synthetic = {run: {"data": "synthetic"} for run in runs}
    found = comparison.compare(runs, registry, resamples=0, conditions=synthetic)
    page = comparison.html_page(found, where=tmp_path).replace("&#x27;", "'")
    assert all(colour == comparison.RUN_COLOUR for c in charts for colour in c[3].values())
    assert "Not comparable with the paper's rows: random (seed 0), random (seed 1): data synthetic, the paper's real" \
        in " ".join(page.split())
    assert "Big model (paper, Table 1)" in page  # still in the table, with its conditions
    assert "val, synthetic data" in page and "val, real data" in page
    text = " ".join(comparison.text_table(found).split())
    assert "left off the bar charts" in text


def test_compare_json_lists_the_conditions(registry: Registry, runs: list[Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["compare", *map(str, runs), "--json", "--ci-resamples", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert all(paper["conditions"] == {"data": "real"} for paper in report["published"]) and report["published"]
    assert all(run["conditions"] == {} for run in report["runs"])  # the toy's corpus says nothing of itself
