"""``abduct compare`` as a decision tool: the headline metrics are the Holm family (each
breakdown a family of its own), the text fits 100 columns, seed runs are named by their seed
and their counts are shown as they are, and the page never runs wider than a 1280 px window.

The runs come from the toy benchmark through a task of this file's own: ``toy-groups-G`` reports
two headline metrics (``accuracy``, ``top2``), a count (``n``) and a ``by_category`` table of G
groups, with units for every cell (``UnitScores.breakdown``), as NL-EYE does."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct import (
    COUNT,
    Evaluation,
    Records,
    Registration,
    RunInfo,
    Settings,
    Spec,
    UnitScores,
    VisualInput,
    hookimpl,
    percent,
)
from abduct.host import Registry, build_registry, main, reset_registry
from abduct_report.comparison import WIDTH, compare, html_page, text_table
from abduct_report.paired import breakdown_of, family_of
from abduct_testing.toy import ToyChoice, ToyPlugin, write_toy_data

ITEMS = 48


class Grouped(ToyChoice):
    """The toy questions, scored as accuracy and top-2 accuracy, overall and per category
    (question i is in category ``c{i mod groups}``)."""

    def __init__(self, groups: int) -> None:
        self.groups = groups
        self.metric_info = {"accuracy": percent(chance=25.0), "top2": percent(chance=50.0), "n": COUNT,
                            "by_*.*.accuracy": percent(chance=25.0), "by_*.*.top2": percent(chance=50.0),
                            "by_*.*.n": COUNT}

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = records["questions"]
        correct = {r.id: float(r.correct) for r in answers}
        top2 = {r.id: float(r.label in np.argsort(r.scores, kind="stable")[-2:]) for r in answers}
        category = {r.id: f"c{int(r.id[1:]) % self.groups:02d}" for r in answers}
        members: dict[str, list[str]] = {}
        for unit, group in category.items():
            members.setdefault(group, []).append(unit)
        table = {g: {"accuracy": 100 * float(np.mean([correct[u] for u in ids])),
                     "top2": 100 * float(np.mean([top2[u] for u in ids])), "n": len(ids)} for g, ids in members.items()}
        metrics = {"accuracy": 100 * float(np.mean(list(correct.values()))),
                   "top2": 100 * float(np.mean(list(top2.values()))), "n": len(answers), "by_category": table}
        units = {"accuracy": UnitScores.means("question", correct), "top2": UnitScores.means("question", top2)}
        for name in ("accuracy", "top2"):
            units.update(units[name].breakdown(name, {"by_category": category}))
        return Evaluation(metrics, answers, units=units)


class Oracle:
    """Knows the toy's answers (choice k of question i is right when k == i mod 4); its
    argument (a checkpoint's path, say) only makes its spec long."""

    accepts = frozenset({"image", "context"})

    def __init__(self, argument: str | None) -> None:
        self.fingerprint = f"oracle-{argument}"

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        right = []
        for text in texts:
            _, question, choice = text.split(" ")
            right.append(float(int(choice) == int(question) % 4))
        return np.array(right)


def make_grouped(spec: Spec, settings: Settings) -> Grouped:
    return Grouped(int(spec.name.rsplit("-", 1)[1]))


def make_oracle(spec: Spec, settings: Settings) -> Oracle:
    return Oracle(spec.argument)


class GroupsPlugin(ToyPlugin):
    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield from super().register_tasks()
        for groups in (2, 12):
            yield Registration(f"toy-groups-{groups}", f"Toy questions in {groups} categories", f"{__name__}:make_grouped")

    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("oracle", "Knows the toy's answers", f"{__name__}:make_oracle")


@pytest.fixture
def registry() -> Iterator[Registry]:
    found = build_registry(extra_plugins=[("toy-groups", GroupsPlugin())])
    reset_registry(found)
    yield found
    reset_registry()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_toy_data(tmp_path / "toy", items=ITEMS)


def _run(task: str, model: str, data: Path, out: Path, *extra: str) -> Path:
    assert main(["eval", task, "--model", model, "--data", str(data), "--out", str(out), "--quiet", *extra]) == 0
    return out


def holm_by_hand(p: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment, written here again: sort, multiply by the hypotheses left,
    keep the running maximum, cap at 1."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    adjusted, highest = [1.0] * len(p), 0.0
    for rank, i in enumerate(order):
        highest = max(highest, (len(p) - rank) * p[i])
        adjusted[i] = min(1.0, highest)
    return adjusted


def test_the_rule_for_headline_metrics_and_breakdowns() -> None:
    info = {"accuracy": {"better": "higher"}, "n": {"better": None}, "human": {"better": None},
            "by_type.a.accuracy": {"better": "higher"}, "by_type.a.n": {"better": None}}
    assert family_of("accuracy", info) == "headline" and family_of("cider", info) == "headline"  # undeclared: rated
    assert family_of("n", info) is None and family_of("human", info) is None and family_of("chunks", {}) is None
    assert family_of("by_type.a.accuracy", info) == "by_type" and family_of("by_type.a.n", info) is None
    assert family_of("per_chunk.3.p_at_1", {}) == "per_chunk" and family_of("per_position.3", {}) == "per_position"
    assert breakdown_of("retrieval.by_type.a.accuracy") == ("retrieval.by_type", "a", "accuracy")
    assert breakdown_of("by_type") is None and breakdown_of("per_position.3") == ("per_position", "3", "")


def test_holm_runs_over_the_headline_metrics_only(registry: Registry, data: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    runs = [_run("toy-groups-12", m, data, tmp_path / m.replace(":", "-")) for m in ("random", "oracle", "random:1")]
    capsys.readouterr()
    assert main(["compare", *map(str, runs), "--json", "--no-published"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["runs"][0]["headline"] == ["accuracy", "top2"]  # n is a count: shown, not tested
    assert list(report["runs"][0]["breakdowns"]) == ["by_category"]
    for run in report["runs"][1:]:
        tests = run["versus"]["metrics"]
        assert run["versus"]["families"]["headline"] == ["accuracy", "top2"]
        assert len(run["versus"]["families"]["by_category"]) == 2 * 12 and "n" not in tests
        for family in ("headline", "by_category"):
            names = [m for m in tests if (m in ("accuracy", "top2")) == (family == "headline")]
            assert sorted(names) == sorted(run["versus"]["families"][family])
            expected = holm_by_hand([tests[m]["p_value"] for m in names])
            assert [tests[m]["p_holm"] for m in names] == pytest.approx(expected, abs=1e-12)
            assert all(tests[m]["family"] == family for m in names)
    oracle = report["runs"][1]["versus"]["metrics"]["accuracy"]
    everything = report["runs"][1]["versus"]["metrics"]
    all_cells = holm_by_hand([t["p_value"] for t in everything.values()])
    # the oracle's headline gain is significant within its family; across all 26 tests it would be
    # corrected 13 times harder
    assert oracle["p_holm"] < 0.05 and all_cells[list(everything).index("accuracy")] > oracle["p_holm"]


def test_the_headline_p_value_ignores_how_many_breakdown_cells_there_are(registry: Registry, data: Path,
                                                                         tmp_path: Path) -> None:
    found = {}
    for groups in (2, 12):
        task = f"toy-groups-{groups}"
        runs = [_run(task, m, data, tmp_path / f"{groups}-{m.replace(':', '-')}") for m in ("random", "random:1", "oracle")]
        comparison = compare(runs, registry, published=False)
        found[groups] = [r.versus for r in comparison.runs[1:]]
        assert all(v is not None and len(v["families"]["by_category"]) == 2 * groups for v in found[groups])
    for few, many in zip(found[2], found[12]):
        assert few is not None and many is not None
        for metric in ("accuracy", "top2"):
            assert few["metrics"][metric]["p_value"] == many["metrics"][metric]["p_value"]
            assert few["metrics"][metric]["p_holm"] == many["metrics"][metric]["p_holm"]


LONG_DIR = "a/rather/deep/folder/of/checkpoints/from/a/long/sweep/epoch-0042/best-weights.pt"


def _wide_runs(data: Path, tmp_path: Path) -> list[Path]:
    """Runs with long specs (an absolute path; a long argument), seeds and 24 breakdown cells."""
    return [_run("toy-groups-12", "random", data, tmp_path / "s0"),
            _run("toy-groups-12", "random", data, tmp_path / "s3", "--seed", "3"),
            _run("toy-groups-12", f"oracle:{tmp_path}/{LONG_DIR}", data, tmp_path / "oracle-path"),
            _run("toy-groups-12", "oracle:" + "very-long-setting-" * 8, data, tmp_path / "oracle-long")]


def test_text_fits_100_columns_with_long_specs_and_many_breakdowns(registry: Registry, data: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    runs = _wide_runs(data, tmp_path)
    capsys.readouterr()
    assert main(["compare", *map(str, runs)]) == 0
    short = capsys.readouterr().out
    assert main(["compare", *map(str, runs), "--breakdowns"]) == 0
    full = capsys.readouterr().out
    for text in (short, full):
        assert max(len(line) for line in text.splitlines()) <= WIDTH
        assert str(tmp_path) not in text and "oracle:…/epoch-0042/best-weights.pt" in text
        assert "oracle:very-long-setting-very" in text and "…" in text  # on a line of its own, its middle cut out
    # headline: a row per run and headline metric; the breakdown only named, then in full
    assert "accuracy ↑" in short and "top2 ↑" in short and "c07 · accuracy" not in short
    assert "by_category (12 groups)" in short and "--breakdowns" in short
    assert "### by_category" in full and "c07 · accuracy ↑" in full and "c11 · top2 ↑" in full
    block = full.split("c07 · accuracy ↑\n", 1)[1].split("\n")[0]
    assert block.split()[:4] == ["random", "(seed", "0)", "4"]  # n of the cell beside its value and interval
    assert re.search(r"\d \[\d+(\.\d+)?, \d+(\.\d+)?\]", block)


def test_seed_runs_are_named_by_seed_and_counts_not_averaged(registry: Registry, data: Path, tmp_path: Path) -> None:
    first = _run("toy-groups-2", "random", data, tmp_path / "s0")
    second = _run("toy-groups-2", "random", data, tmp_path / "s3", "--seed", "3")
    comparison = compare([first, second], registry, published=False)
    assert [r.name for r in comparison.runs] == ["random (seed 0)", "random (seed 3)"]
    [group] = comparison.seeds
    assert group["counts"] == {"n": ITEMS, "by_category.c00.n": ITEMS // 2, "by_category.c01.n": ITEMS // 2}
    assert group["metrics"]["n"] == {"mean": ITEMS, "std": 0.0}  # --json keeps its keys
    text, page = text_table(comparison, breakdowns=True), html_page(comparison)
    assert "random (seed 3)" in text and "random, seeds 0, 3: mean ± std" in text
    assert f"{ITEMS} ± " not in text + page and f"{ITEMS // 2} ± " not in text + page
    assert f"n {ITEMS}" in text  # every run's count, once
    seeds_row = re.search(r'<tr class="seeds">(.*?)</tr>', page)
    assert seeds_row is not None and seeds_row.group(1).endswith(f"<td>{ITEMS}</td>")


def test_compare_page_is_no_wider_than_a_1280_px_window(registry: Registry, data: Path, tmp_path: Path) -> None:
    from abduct_testing.browser import browser_or_skip, samples_browser

    chromium = browser_or_skip()
    runs = _wide_runs(data, tmp_path)
    page = tmp_path / "cmp" / "compare.html"
    assert main(["compare", *map(str, runs), "--html", str(page)]) == 0
    text = page.read_text()
    assert text.count("<details>") == 1 and "class=\"scroll\"" in text
    with samples_browser(chromium) as tab:
        tab.page.set_viewport_size({"width": 1280, "height": 900})
        tab.page.goto(page.as_uri())
        shown = tab.page.evaluate("() => document.querySelector('details table').checkVisibility()")
        assert shown is False  # the breakdown starts collapsed
        tab.page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        found = tab.page.evaluate("""() => ({
            scroll: document.documentElement.scrollWidth, window: window.innerWidth,
            boxes: Array.from(document.querySelectorAll('div.scroll')).map(d => getComputedStyle(d).overflowX),
            wide: Array.from(document.body.querySelectorAll('*')).map(e => [e.tagName, e.getBoundingClientRect()])
                .filter(([, r]) => r.width > 0 && (r.left < -0.5 || r.right > window.innerWidth + 0.5))
                .map(([tag, r]) => `${tag} ${r.left}-${r.right}`)})""")
    assert found["window"] == 1280 and found["scroll"] <= 1280, found
    assert found["boxes"] and set(found["boxes"]) == {"auto"}
    assert found["wide"] == []
