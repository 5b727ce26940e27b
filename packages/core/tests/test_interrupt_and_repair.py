"""A CLI that says what it did: Ctrl-C exits 130 saying that the same command resumes (a real
process, as a shell sees it); a resumed run says how many units it kept, --quiet or not; a
damaged run folder (a cut-off or garbled stored line, no or a garbled run.json, another
configuration's units, a results.json that does not parse) is said in one line before it is
repaired or refused; a warning is printed once per command."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import click
import pytest

from abduct import hookimpl
from abduct._cli import main
from abduct._registry.registry import Registry, build_registry, reset_registry
from abduct._run.evaluate import EvalConfig, run_evaluation
from abduct._run.runner import RepairWarning, UnitStore
from abduct_testing import CallCountingRegistry, Interrupted
from toy_plugin import write_toy_data

HERE = Path(__file__).parent


def _eval(data: Path, out: Path, *extra: str, model: str = "random") -> list[str]:
    return ["eval", "toy-choice", "--model", model, "--data", str(data), "--out", str(out), "--quiet", "--no-cache",
            *extra]


def _err_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.strip().splitlines()


def test_ctrl_c_exits_130_saying_the_same_command_resumes(toy_registry: Registry, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    data = write_toy_data(tmp_path / "data", items=24)
    out = tmp_path / "run"
    args = _eval(data, out, model="slow-random:0.2")
    script = textwrap.dedent(f"""
        import signal, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a background job ignores it)
        sys.path[:0] = [{str(HERE)!r}]
        from abduct._cli import main
        from abduct._registry.registry import build_registry, reset_registry
        from toy_plugin import ToyPlugin

        reset_registry(build_registry(extra_plugins=[("toy", ToyPlugin())]))
        sys.exit(main({args!r}))
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not list((out / ".partial").glob("shard-*.jsonl")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    found = re.fullmatch(r"interrupted: rerun the same command to resume \((\d+) units? kept in (.+)\)\n", err)
    assert found is not None, err
    kept = int(found.group(1))
    assert found.group(2) == str(out / ".partial") and 0 < kept < 24
    stored = [line for shard in (out / ".partial").glob("shard-*.jsonl") for line in shard.read_text().splitlines()]
    assert len(stored) == kept

    assert main([*args, "--json"]) == 0  # the same command: it resumes, and says so on stderr (--quiet, --json)
    captured = capsys.readouterr()
    assert captured.err == f"resumed: {kept} of 24 units kept from an unfinished run in {out}\n"
    resumed = json.loads(captured.out)
    assert resumed["resumed"] is True and resumed["resumed_units"] == {"kept": kept, "of": 24}
    assert main(_eval(data, tmp_path / "clean", model="slow-random:0.01")) == 0  # the same random model, faster
    clean = json.loads((tmp_path / "clean" / "results.json").read_text())
    assert clean["resumed"] is False and clean["resumed_units"] == {"kept": 0, "of": 24}
    assert "resumed" not in capsys.readouterr().err
    assert resumed["metrics"] == clean["metrics"]
    assert (out / "predictions.jsonl").read_text() == (tmp_path / "clean" / "predictions.jsonl").read_text()


def _commands(**commands: click.Command) -> None:
    class Commands:
        @hookimpl
        def register_commands(self, cli: click.Group) -> None:
            for command in commands.values():
                cli.add_command(command)

    reset_registry(build_registry(extra_plugins=[("commands", Commands())]))


@click.command("stopped")
def _stopped() -> None:
    raise KeyboardInterrupt


def test_ctrl_c_elsewhere_is_a_plain_interrupted_line_and_130(capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import abduct._run.merge

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(abduct._run.merge, "merge_shards", interrupted)
    assert main(["merge", str(tmp_path / "merged"), str(tmp_path)]) == 130
    assert capsys.readouterr().err == ("interrupted: the merge did not finish; rerun the same command to merge (it "
                                       "starts again)\n")
    _commands(stopped=_stopped)
    try:
        assert main(["stopped"]) == 130
        assert capsys.readouterr().err == "interrupted\n"
        monkeypatch.setenv("RANK", "1")  # under torchrun, rank 0 alone says it
        assert main(["stopped"]) == 130
        assert capsys.readouterr().err == ""
    finally:
        reset_registry()


def _interrupted_run(data: Path, out: Path, registry: Registry, stop_at: int = 5) -> list[Path]:
    """``out`` holding the units finished before the model's call ``stop_at`` (one shard file)."""
    with contextlib.suppress(Interrupted):
        run_evaluation(EvalConfig("toy-choice", "random", data, out, quiet=True, use_cache=False),
                       CallCountingRegistry(registry, stop_at=stop_at))
    shards = sorted((out / ".partial").glob("shard-*.jsonl"))
    assert shards and (out / ".partial" / "run.json").is_file()
    return shards


def _same_as_clean(data: Path, tmp_path: Path, out: Path) -> dict[str, object]:
    results = json.loads((out / "results.json").read_text())
    assert main(_eval(data, tmp_path / "clean")) == 0
    assert results["metrics"] == json.loads((tmp_path / "clean" / "results.json").read_text())["metrics"]
    assert (out / "predictions.jsonl").read_text() == (tmp_path / "clean" / "predictions.jsonl").read_text()
    assert not (out / ".partial").exists()
    return results  # type: ignore[no-any-return]


@pytest.mark.parametrize("damage", ["cut off", "garbled", "both"])
def test_a_damaged_stored_line_is_said_once_then_dropped_and_computed_again(
        toy_registry: Registry, toy_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        damage: str) -> None:
    out = tmp_path / "run"
    shard = _interrupted_run(toy_data, out, toy_registry)[-1]
    lines = shard.read_bytes().splitlines(keepends=True)
    assert len(lines) == 4
    unit = json.loads(lines[-1])["unit"]
    if damage in ("garbled", "both"):
        lines[1] = b"\xff\xfe not a stored unit\n"
    if damage in ("cut off", "both"):
        lines[-1] = lines[-1][: len(lines[-1]) // 2]  # a write that did not finish
    shard.write_bytes(b"".join(lines))
    expected = {
        "cut off": f"warning: {shard}: line 4 is cut off; dropped, its unit ({unit}) is computed again",
        "garbled": f"warning: {shard}: line 2 is garbled; dropped, its unit is computed again",
        "both": f"warning: {shard}: lines 2, 4 are cut off or garbled; dropped, their units are computed again",
    }[damage]

    with pytest.warns(RepairWarning) as caught:  # said, and the file repaired: a second look finds nothing
        UnitStore(shard.parent)
    assert [str(w.message) for w in caught] == [expected.removeprefix("warning: ")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(UnitStore(shard.parent).done) == 4 - (2 if damage == "both" else 1)

    shard.write_bytes(b"".join(lines))  # damaged again, for the command line
    assert main(_eval(toy_data, out)) == 0
    assert _err_lines(capsys) == [expected, f"resumed: {4 - (2 if damage == 'both' else 1)} of 12 units kept from "
                                            f"an unfinished run in {out}"]
    assert _same_as_clean(toy_data, tmp_path, out)["resumed"] is True


@pytest.mark.parametrize("damage", ["no run.json", "garbled run.json"])
def test_stored_units_of_an_unknown_run_are_said_then_removed(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str], damage: str) -> None:
    out = tmp_path / "run"
    _interrupted_run(toy_data, out, toy_registry)
    marker = out / ".partial" / "run.json"
    if damage == "no run.json":
        marker.unlink()
        expected = f"warning: {out / '.partial'} has no run.json"
    else:
        marker.write_text('{"task": "toy-ch')
        expected = f"warning: {marker} does not parse"
    assert main(_eval(toy_data, out)) == 0
    assert _err_lines(capsys) == [f"{expected}, so which run stored the 4 units there is unknown; removed, they are "
                                  "computed again"]
    assert _same_as_clean(toy_data, tmp_path, out)["resumed"] is False


def test_another_configurations_units_are_refused_or_with_overwrite_said_and_removed(
        toy_registry: Registry, toy_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    _interrupted_run(toy_data, out, toy_registry)
    assert main(_eval(toy_data, out, "--limit", "3")) == 2
    assert _err_lines(capsys) == [f"error: {out} holds an unfinished run with a different limit (4 units in "
                                  f"{out / '.partial'}); use another --out, or --overwrite to discard it"]
    assert main(_eval(toy_data, out, "--limit", "3", "--overwrite")) == 0
    assert _err_lines(capsys) == [f"warning: --overwrite: {out / '.partial'} held an unfinished run with a different "
                                  "limit (4 units); removed"]
    assert json.loads((out / "results.json").read_text())["resumed"] is False


def test_overwrite_resumes_the_same_configurations_units(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Rerunning the same command resumes, as the interrupted line says, --overwrite in it or not."""
    out = tmp_path / "run"
    _interrupted_run(toy_data, out, toy_registry)
    assert main(_eval(toy_data, out, "--overwrite")) == 0
    assert _err_lines(capsys) == [f"resumed: 4 of 12 units kept from an unfinished run in {out}"]
    assert _same_as_clean(toy_data, tmp_path, out)["resumed"] is True


def test_a_results_json_that_does_not_parse_is_refused_in_one_line(toy_registry: Registry, toy_data: Path,
                                                                   tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(_eval(toy_data, out)) == 0
    capsys.readouterr()
    results = out / "results.json"
    results.write_text(results.read_text()[:100])
    assert main(_eval(toy_data, out)) == 2
    assert _err_lines(capsys) == [f"error: {results} cannot be read as a run's results (cut off or edited), so which "
                                  f"run {out} holds is unknown; use another --out, or --overwrite to replace it"]
    assert main(_eval(toy_data, out, "--overwrite")) == 0
    assert json.loads(results.read_text())["task"] == "toy-choice"


@click.command("warns")
def _warns() -> None:
    for _ in range(2):  # as two samplers or two models would, with Python's own record of shown warnings reset
        with warnings.catch_warnings():
            warnings.warn("video.mp4: 1 time span(s) end past the video's end (warned once per video)",
                          UserWarning, stacklevel=1)
    warnings.warn("another", UserWarning, stacklevel=1)


def test_a_warning_prints_once_per_command(capsys: pytest.CaptureFixture[str]) -> None:
    _commands(warns=_warns)
    try:
        for _ in range(2):  # each command shows it again
            assert main(["warns"]) == 0
            assert capsys.readouterr().err == ("warning: video.mp4: 1 time span(s) end past the video's end (warned "
                                               "once per video)\nwarning: another\n")
    finally:
        reset_registry()
