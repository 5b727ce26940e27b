"""``abduct demo`` runs the installed sections in name order, shares what one section made
with the next, keeps its outputs only with --out, and refuses unknown sections in one line; with
--jobs, sections run in worker processes with the same tables, each printed as it finishes, an
error in one line and Ctrl-C stopping every worker."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct import AbductError, Registration, hookimpl
from abduct.host import Registry, build_registry, main, reset_registry
from abduct.kit import default_cache_dir
from abduct_demo import DEMO_THREADS, DemoContext, DemoTable, run_demo
from abduct_demo.runner import deterministic_torch, own_cache
from abduct_testing.toy import write_toy_data
from demo_plugin import ToyDemoPlugin

HERE = Path(__file__).parent


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


# -- sections in worker processes (--jobs) ------------------------------------------------------------
def also_random(ctx: DemoContext) -> DemoTable:
    """The toy section's random baseline again, on the same data: run once for both sections."""
    data = ctx.shared("toy-data", lambda: write_toy_data(ctx.dir("toy-data")))
    print("a section's stray print")  # must not reach the parent's stdout (--json prints one document)
    rows = ctx.evaluate({"random": "random"}, ["toy-choice"], data, section="w-also-random")
    return DemoTable("Also random", [("toy-choice", "accuracy")], rows)


def starts_processes(ctx: DemoContext) -> DemoTable:
    warnings.warn("a section's warning", stacklevel=1)
    return DemoTable(f"start method {multiprocessing.get_start_method()}", [], {})


def fails(ctx: DemoContext) -> DemoTable:
    raise AbductError("this section refuses")


def crashes(ctx: DemoContext) -> DemoTable:
    raise ZeroDivisionError("a bug in a section")


def sleeps(ctx: DemoContext) -> DemoTable:
    ctx.say("sleeping")
    (ctx.work / f"sleeper-{os.getpid()}").write_text("")  # which process ran it
    time.sleep(120)
    return DemoTable("Slept", [], {})


class WorkerSections:
    """Sections for the worker tests; the workers rebuild this plugin from its pickle."""

    @hookimpl
    def register_demos(self) -> Iterator[Registration]:
        yield Registration("w-also-random", "random on the toy data again", "test_demo:also_random")
        yield Registration("w-fails", "a user error", "test_demo:fails")
        yield Registration("w-crashes", "a bug", "test_demo:crashes")
        yield Registration("w-sleeps", "takes two minutes", "test_demo:sleeps")
        yield Registration("w-starts-processes", "says how it would start a process", "test_demo:starts_processes")


@pytest.fixture
def worker_registry() -> Iterator[Registry]:
    registry = build_registry(extra_plugins=[("toy", ToyDemoPlugin()), ("workers", WorkerSections())])
    reset_registry(registry)
    yield registry
    reset_registry()


def test_workers_give_the_tables_of_one_process_and_share_across_workers(
        worker_registry: Registry, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    only = ["w-also-random", "toy-second", "toy"]
    alone = run_demo(out_dir=tmp_path / "alone", quiet=True, only=only, jobs=1)
    finished: list[str] = []
    together = run_demo(out_dir=tmp_path / "together", quiet=True, only=only, jobs=2,
                        on_table=lambda name, table: finished.append(name))
    assert list(together) == list(alone) == ["toy", "toy-second", "w-also-random"]  # name order, whatever finished first
    assert sorted(finished) == sorted(only)
    for name in only:
        assert together[name].rows == alone[name].rows and together[name].format() == alone[name].format()
    for run in (tmp_path / "alone", tmp_path / "together"):
        made = [d.name for d in run.iterdir() if d.name in ("toy-data", "other-data")]
        assert len(made) == 1  # made once, by whichever section asked first, and handed to the others
        random_runs = list(run.glob("*/eval/random/toy-choice/results.json"))
        assert len(random_runs) == 1  # random on toy-choice ran once for two sections
    out = capfd.readouterr().out
    assert out.count("a section's stray print") == 1  # the one-process run's; a worker's goes to stderr


def test_json_with_workers_is_one_document(worker_registry: Registry, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--quiet", "--json", "--jobs", "2", "--only", "w-also-random", "--only", "toy"]) == 0
    document = json.loads(capfd.readouterr().out)  # no table, no section's print: the document alone
    assert list(document) == ["toy", "w-also-random"]
    assert document["w-also-random"]["random"] == document["toy"]["random"]


def test_workers_start_processes_and_show_warnings_as_this_process_does(
        worker_registry: Registry, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--quiet", "--jobs", "2", "--only", "w-starts-processes", "--only", "toy"]) == 0
    captured = capfd.readouterr()
    # a spawned worker would spawn its data loaders too: seconds of imports for each (fork on Linux)
    assert f"start method {multiprocessing.get_start_method()}" in captured.out
    assert "warning: a section's warning" in captured.err and "UserWarning" not in captured.err  # one line


def test_each_table_is_printed_when_its_section_finishes(worker_registry: Registry,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # w-fails runs after toy (name order, one at a time): toy's table is out before the error
    assert main(["demo", "--quiet", "--jobs", "1", "--only", "toy", "--only", "w-fails"]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("Toy\nmodel") and "a toy section" in captured.out
    assert captured.err.strip() == "error: this section refuses"


def test_an_error_in_a_worker_is_one_line_and_stops_the_others(worker_registry: Registry, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    code = main(["demo", "--quiet", "--jobs", "2", "--only", "w-fails", "--only", "w-sleeps", "--out", str(tmp_path)])
    assert code == 2 and capsys.readouterr().err.strip().splitlines()[-1] == "error: this section refuses"
    assert time.monotonic() - started < 100  # the sleeper (120 s) was stopped, not waited for
    assert multiprocessing.active_children() == []
    with pytest.raises(RuntimeError, match="(?s)w-crashes failed in its worker process.*ZeroDivisionError"):
        run_demo(out_dir=None, quiet=True, only=["w-crashes", "toy"], jobs=2)
    assert multiprocessing.active_children() == []


def test_ctrl_c_stops_every_worker_without_a_traceback(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import signal, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a background job ignores it)
        sys.path[:0] = [{str(HERE)!r}]
        from abduct.host import build_registry, main, reset_registry
        from demo_plugin import ToyDemoPlugin
        from test_demo import WorkerSections

        if __name__ == "__main__":
            reset_registry(build_registry(extra_plugins=[("toy", ToyDemoPlugin()), ("workers", WorkerSections())]))
            sys.exit(main(["demo", "--jobs", "2", "--only", "w-sleeps", "--only", "toy", "--out", {str(tmp_path)!r}]))
    """)
    (tmp_path / "run.py").write_text(script)
    process = subprocess.Popen([sys.executable, str(tmp_path / "run.py")], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob("sleeper-*")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert list(tmp_path.glob("sleeper-*")), "the sleeping section never started"
    sleeper = int(next(tmp_path.glob("sleeper-*")).name.split("-")[1])
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err  # 128 + SIGINT, as shells expect
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "interrupted"
    with pytest.raises(ProcessLookupError):  # the worker is gone, not left running
        os.kill(sleeper, 0)
