"""``abduct demo`` runs the installed sections in name order, shares what one section made
with the next, keeps its outputs only with --out, and refuses unknown sections in one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from abduct._cli import main
from abduct._demo import DEMO_THREADS, DemoTable, deterministic_torch, own_cache, run_demo
from abduct._registry.registry import Registry
from abduct.kit import default_cache_dir


def test_sections_run_in_name_order_and_share(toy_registry: Registry, tmp_path: Path) -> None:
    # --only keeps this test to the toy plugin's sections where other plugins are installed
    tables = run_demo(out_dir=tmp_path / "demo", quiet=True, registry=toy_registry, only=["toy-second", "toy"])
    assert list(tables) == ["toy", "toy-second"]
    toy = tables["toy"].rows
    assert set(toy) == {"random", "text_only"} and toy["random"]["toy-choice"]["n"] == 12
    assert tables["toy-second"].rows["files"]["toy-choice"]["n"] == 2  # toy.json and images/, made by "toy"
    assert not (tmp_path / "demo" / "other-data").exists()
    assert (tmp_path / "demo" / "toy" / "eval" / "random" / "toy-choice" / "results.json").is_file()


def test_cli_json_keeps_out_and_names_it(toy_registry: Registry, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kept"
    assert main(["demo", "--quiet", "--json", "--only", "toy", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert set(json.loads(captured.out)) == {"toy"}
    assert str(out) in captured.err and (out / "toy").is_dir()
    overview = (out / "report.html").read_text()  # the runs side by side, as abduct compare shows them
    assert str(out / "report.html") in captured.err
    assert "toy-choice" in overview and "text_only (toy)" in overview
    # titled, runs named by their labels, links relative: no path of the machine on the page
    assert "<title>abduct demo: " in overview and "random (toy)" in overview and str(tmp_path) not in overview


def test_without_out_nothing_is_left_and_no_path_printed(toy_registry: Registry, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert main(["demo", "--quiet", "--only", "toy"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Toy\nmodel") and "a toy section" in captured.out
    assert str(tmp_path) not in captured.out + captured.err
    assert list(tmp_path.iterdir()) == []


def test_unknown_section_is_one_line(toy_registry: Registry, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--only", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: no demo section 'nope'; installed: ") and "toy, toy-second" in err


def test_table_layout() -> None:
    table = DemoTable("Title", [("sherlock-retrieval", "p_at_1"), ("sherlock-comparison", "accuracy")],
                      {"random": {"sherlock-retrieval": {"p_at_1": 1.0}}, "tuned": {
                          "sherlock-retrieval": {"p_at_1": 12.345}, "sherlock-comparison": {"accuracy": 3}}},
                      note="note")
    lines = table.format().splitlines()
    assert lines[0] == "Title"
    assert lines[1].split() == ["model", "retr.p_at_1", "comp.accuracy"]
    assert lines[3].split() == ["random", "1.00", "-"]
    assert lines[4].split() == ["tuned", "12.35", "3"]  # a count stays a whole number
    assert lines[-1] == "note"
    table.arrows = {("sherlock-retrieval", "p_at_1"): "↑", ("sherlock-comparison", "accuracy"): ""}
    assert table.format().splitlines()[1].split() == ["model", "retr.p_at_1", "↑", "comp.accuracy"]


def test_tables_show_directions_and_json_keeps_counts_whole(toy_registry: Registry,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--quiet", "--only", "toy"]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    assert "choi.accuracy ↑" in header and header.rstrip().endswith("choi.n")  # a count has no direction
    assert main(["demo", "--quiet", "--json", "--only", "toy"]) == 0
    rows = json.loads(capsys.readouterr().out)["toy"]
    assert rows["random"]["toy-choice"]["n"] == 12 and isinstance(rows["random"]["toy-choice"]["n"], int)
    assert isinstance(rows["random"]["toy-choice"]["accuracy"], float)


def test_the_demo_has_a_cache_of_its_own_and_gives_the_users_back(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # a cache that outlives a run would hand the next run features computed in other batches
    monkeypatch.setenv("ABDUCT_CACHE_DIR", str(tmp_path / "users"))
    with own_cache(tmp_path / "work"):
        assert default_cache_dir() == tmp_path / "work" / "cache"
    assert default_cache_dir() == tmp_path / "users"
    monkeypatch.delenv("ABDUCT_CACHE_DIR")
    with own_cache(tmp_path / "work"):
        assert default_cache_dir() == tmp_path / "work" / "cache"
    assert "ABDUCT_CACHE_DIR" not in os.environ


def test_torch_runs_on_fixed_threads_with_deterministic_kernels_inside_the_demo() -> None:
    torch = pytest.importorskip("torch")  # the core does not depend on torch: runs where torch is installed
    torch.set_num_threads(2)
    with deterministic_torch():
        assert torch.get_num_threads() == DEMO_THREADS and torch.are_deterministic_algorithms_enabled()
    assert torch.get_num_threads() == 2 and not torch.are_deterministic_algorithms_enabled()
