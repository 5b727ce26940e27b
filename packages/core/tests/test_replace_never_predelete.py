"""A finished run is only ever replaced whole: a rerun into its folder (``--overwrite``, or a
merge) writes beside it and swaps in when complete. A rerun that fails on the way (the model's
server goes down, the disk fills at any write, a rename fails, Ctrl-C) leaves every file of the
finished run byte-identical and says so in its one error line; SIGTERM is Ctrl-C with exit 143."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct import hookimpl
from abduct._cli import main
from abduct._registry.registry import Registry, build_registry, reset_registry
from abduct.contract import RunPages
from toy_plugin import SlowRandom, ToyPlugin, write_toy_data


class Pages:
    """Pages as abduct-report renders them: files, and a folder staged inside the run folder."""

    @hookimpl
    def render_run_pages(self, results: Mapping[str, Any], predictions: Sequence[Mapping[str, Any]], out_dir: Path,
                         sample_view: Any, cache_dir: Path | None) -> RunPages:
        folder = Path(tempfile.mkdtemp(prefix=".samples-", dir=out_dir))
        (folder / "0.png").write_bytes(str(results["model"]["spec"]).encode())
        return RunPages(files={"report.md": f"# {results['model']['spec']}\n", "samples.html": "<p>samples</p>\n"},
                        folders={"samples": folder})


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    monkeypatch.setenv("ABDUCT_DISABLE_PLUGINS", "report")  # these pages stand for its, whether installed or not
    registry = build_registry(extra_plugins=[("toy", ToyPlugin()), ("pages", Pages())])
    reset_registry(registry)
    yield registry
    reset_registry()


def _eval(data: Path, out: Path, model: str, *extra: str) -> list[str]:
    return ["eval", "toy-choice", "--model", model, "--data", str(data), "--out", str(out), "--quiet", "--no-cache",
            "--batch-size", "4", *extra]


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def finished(registry: Registry, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A finished run (of ``random``) with its pages and samples folder, and its files' hashes."""
    data = write_toy_data(tmp_path / "data", items=12)
    out = tmp_path / "run"
    assert main(_eval(data, out, "random")) == 0
    before = _hashes(out)
    assert {"results.json", "predictions.jsonl", "units.json", "report.md", "samples.html", "samples/0.png"} <= set(before)
    return data, out, before


def _left_as_it_was(out: Path, before: dict[str, str]) -> None:
    """Every file of the finished run byte-identical; besides them only the new run's stored
    units (to resume it), no staging or temporary file."""
    after = _hashes(out)
    assert {k: after.get(k) for k in before} == before
    assert all(name.startswith(".partial/") for name in set(after) - set(before)), sorted(after)
    assert not [p.name for p in out.iterdir() if p.name.startswith((".abduct-", ".samples-")) or p.suffix == ".tmp"]


def test_a_rerun_whose_server_goes_down_leaves_the_finished_run(finished: tuple[Path, Path, dict[str, str]],
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    data, out, before = finished
    calls = []

    def down(method: Any) -> Any:
        def call(self: SlowRandom, *args: Any) -> np.ndarray:
            calls.append(1)
            if len(calls) > 1:  # the first batch is answered, then the server is gone
                raise ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
            return np.asarray(method(self, *args))
        return call

    monkeypatch.setattr(SlowRandom, "score_matrix", down(SlowRandom.score_matrix))
    monkeypatch.setattr(SlowRandom, "score", down(SlowRandom.score))
    capsys.readouterr()
    assert main(_eval(data, out, "slow-random:0", "--overwrite")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Connection refused" in err, err
    assert err.endswith(f"; the finished run in {out} is left as it was\n"), err
    assert len(calls) > 1
    _left_as_it_was(out, before)


@pytest.mark.parametrize("nth", [1, 2, 3, 4, 5])
def test_a_rerun_on_a_disk_that_fills_leaves_the_finished_run(finished: tuple[Path, Path, dict[str, str]], nth: int,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The disk fills at the Nth output written (five: predictions, units, two pages, results)."""
    import abduct._run.outdir as outdir

    data, out, before = finished
    real, written = outdir.atomic_write_bytes, []

    def filling(path: Path, data: bytes) -> None:
        written.append(path)
        if len(written) == nth:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(outdir, "atomic_write_bytes", filling)
    capsys.readouterr()
    assert main(_eval(data, out, "slow-random:0", "--overwrite")) == 2
    err = capsys.readouterr().err
    assert err == (f"error: {written[-1]}: No space left on device; the finished run in {out} is left as it was\n")
    _left_as_it_was(out, before)


@pytest.mark.parametrize("nth", range(1, 14))  # 1 folder into staging, 6 aside, 6 in
@pytest.mark.parametrize("fault", [OSError(errno.EIO, "Input/output error"), KeyboardInterrupt()])
def test_a_fault_at_any_rename_of_the_swap_puts_the_finished_run_back(
        finished: tuple[Path, Path, dict[str, str]], nth: int, fault: BaseException, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A rename that fails, or Ctrl-C between two of them, while the new run is swapped in."""
    data, out, before = finished
    real, renames = Path.rename, []

    def renaming(self: Path, target: Any) -> Path:
        renames.append(self)
        if len(renames) == nth:
            raise fault
        return real(self, target)

    monkeypatch.setattr(Path, "rename", renaming)
    code = main(_eval(data, out, "slow-random:0", "--overwrite"))
    assert code == (130 if isinstance(fault, KeyboardInterrupt) else 2), capsys.readouterr().err
    if isinstance(fault, OSError):
        assert capsys.readouterr().err.endswith(f"; the finished run in {out} is left as it was\n")
    _left_as_it_was(out, before)


def test_a_rerun_that_succeeds_replaces_the_whole_run(finished: tuple[Path, Path, dict[str, str]]) -> None:
    """Nothing of the old run is left beside the new one, and nothing staged."""
    data, out, before = finished
    assert main(_eval(data, out, "slow-random:0", "--overwrite")) == 0
    after = _hashes(out)
    assert set(after) == set(before)
    assert after["report.md"] != before["report.md"] and after["samples/0.png"] != before["samples/0.png"]
    assert (out / "samples" / "0.png").read_text() == "slow-random:0"
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("nth", [1, 3, 5])
def test_sigterm_during_the_writes_of_a_rerun_is_one_line_143_and_leaves_the_finished_run(
        finished: tuple[Path, Path, dict[str, str]], nth: int, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """SIGTERM (kill, a batch system's time limit) as Ctrl-C: the run unwinds, one line, exit 143."""
    import abduct._run.outdir as outdir

    data, out, before = finished
    real, written = outdir.atomic_write_bytes, []

    def killed(path: Path, data: bytes) -> None:
        written.append(path)
        if len(written) == nth:
            os.kill(os.getpid(), signal.SIGTERM)
        real(path, data)

    monkeypatch.setattr(outdir, "atomic_write_bytes", killed)
    capsys.readouterr()
    assert main(_eval(data, out, "slow-random:0", "--overwrite")) == 143
    assert capsys.readouterr().err == f"terminated: rerun the same command to resume (12 units kept in {out / '.partial'})\n"
    _left_as_it_was(out, before)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # main() put the default back


def test_a_process_forked_during_a_command_ends_on_sigterm() -> None:
    """The command's SIGTERM handler (Ctrl-C's unwinding) is not inherited by a process a
    library forks meanwhile: multiprocessing's Pool.terminate() ends its workers with SIGTERM,
    and one stuck on a lock copied at the fork would otherwise never end."""
    from abduct._cli import _on_sigterm, _sigterm_as_interrupt

    with _sigterm_as_interrupt():
        assert signal.getsignal(signal.SIGTERM) is _on_sigterm
        read_end, write_end = os.pipe()
        child = os.fork()
        if child == 0:  # the child: waits to be ended; with the command's handler it would exit 1
            try:
                os.close(read_end)
                os.write(write_end, b"1" if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL else b"0")
                time.sleep(60)
            finally:
                os._exit(1)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            default_in_child = pipe.read(1)
        os.kill(child, signal.SIGTERM)
        started = time.monotonic()
        _, status = os.waitpid(child, 0)
        assert signal.getsignal(signal.SIGTERM) is _on_sigterm  # the command's own is untouched
    assert default_in_child == b"1"
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM and time.monotonic() - started < 10


def test_sigterm_to_a_running_eval_is_one_line_143_with_no_temporary_file_left(
        finished: tuple[Path, Path, dict[str, str]]) -> None:
    """A real process, as a shell or a batch system sees it: the rerun resumes afterwards."""
    data, out, before = finished
    args = _eval(data, out, "slow-random:0.2", "--overwrite")
    script = textwrap.dedent(f"""
        import os, sys
        os.environ["ABDUCT_DISABLE_PLUGINS"] = "report"
        sys.path[:0] = [{str(Path(__file__).parent)!r}]
        from abduct._cli import main
        from abduct._registry.registry import build_registry, reset_registry
        from toy_plugin import ToyPlugin

        reset_registry(build_registry(extra_plugins=[("toy", ToyPlugin())]))
        sys.exit(main({args!r}))
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    deadline = time.monotonic() + 60
    while not list((out / ".partial").glob("shard-*.jsonl")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.terminate()  # SIGTERM
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert re.fullmatch(r"terminated: rerun the same command to resume \(\d+ units? kept in .+\)\n", err), err
    _left_as_it_was(out, before)


def test_building_folder_adds_a_whole_corpus_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``abduct.kit.building_folder``, which every ``synth`` writes through: into a new folder, into
    one holding other files (kept; an entry of the same name replaced), and failing at each step."""
    from abduct.kit import building_folder

    with building_folder(tmp_path / "new" / "corpus") as folder:
        (folder / "a.json").write_text("new")
    assert (tmp_path / "new" / "corpus" / "a.json").read_text() == "new"
    assert [p.name for p in (tmp_path / "new").iterdir()] == ["corpus"]

    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("the user's")
    (out / "a.json").write_text("old")
    before = _hashes(out)
    with pytest.raises(OSError), building_folder(out) as folder:
        (folder / "a.json").write_text("new")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert _hashes(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["mine", "new"]

    real, renames = Path.rename, []

    def renaming(self: Path, target: Any) -> Path:
        renames.append(self)
        if len(renames) == 3:  # the second entry's old one, moved aside
            raise OSError(errno.EIO, "Input/output error")
        return real(self, target)

    monkeypatch.setattr(Path, "rename", renaming)
    with pytest.raises(OSError), building_folder(out) as folder:
        (folder / "a.json").write_text("new")
        (folder / "notes.txt").write_text("new")
    monkeypatch.undo()
    assert _hashes(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["mine", "new"]

    with building_folder(out) as folder:
        (folder / "a.json").write_text("new")
    assert (out / "a.json").read_text() == "new" and (out / "notes.txt").read_text() == "the user's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "new"]


def test_a_swap_killed_outright_is_undone_by_the_next_run(finished: tuple[Path, Path, dict[str, str]],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """SIGKILL between two renames of the swap: the old run's files aside, a new file in. The next
    run into the folder puts the finished run back (one warning) before anything else."""
    data, out, before = finished
    aside = out / ".abduct-old"
    aside.mkdir()
    for name in ("results.json", "predictions.jsonl", "samples"):
        (out / name).rename(aside / name)
    (out / "predictions.jsonl").write_text("the new run's\n")
    (out / ".abduct-new").mkdir()
    capsys.readouterr()
    assert main(_eval(data, out, "slow-random:0")) == 2  # another configuration, without --overwrite
    assert capsys.readouterr().err.splitlines() == [
        f"warning: {out}: a run replacing the finished run there was killed halfway; the finished run is put back",
        f"error: {out} holds a finished run of toy-choice / random (different model); use another --out or pass "
        "--overwrite"]
    assert _hashes(out) == before and not [p for p in out.iterdir() if p.name.startswith(".abduct-")]
