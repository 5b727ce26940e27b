"""Bad input through the CLI: one `error:` line and exit 2, never a traceback, never a
half-written --out (issue: 175 fuzzed inputs; the dataset packages fuzz their own loaders)."""

from __future__ import annotations

import json
import math
import os
import pathlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from abduct import hookimpl
from abduct._cli import main
from abduct._registry.registry import Registry, build_registry, reset_registry
from abduct._run.outdir import LOCK_FILE, locked
from abduct.contract.errors import AbductError, DataError
from abduct.kit.io import read_json
from abduct_testing.fuzzing import OUTPUT_FILES, clean_failure_problem, half_written_problem, run_cli
from abduct_testing.toy import ToyPlugin


def _eval(data: Path, out: Path, *extra: str, task: str = "toy-choice", model: str = "random") -> list[str]:
    return ["eval", task, "--model", model, "--data", str(data), "--out", str(out), "--quiet", *extra]


def _one_error_line(capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error:") and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


def _no_outputs(out: Path) -> None:
    assert not any((out / name).exists() for name in OUTPUT_FILES), list(out.iterdir()) if out.exists() else None


# -- strict JSON ------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "reason"), [
    ('{"a": 1, "a": 2}', "duplicate key 'a'"),
    ('{"a": Infinity}', "Infinity is not a JSON number"),
    ('[1, -Infinity]', "-Infinity is not a JSON number"),
    ('{"x": [NaN]}', "NaN is not a JSON number"),
    ('{"x": 1e400}', "1e400 is beyond the range of a 64-bit float"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
])
def test_read_json_refuses_what_json_allows_but_numbers_must_not_hold(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(DataError, match=reason) as caught:
        read_json(path, "predictions")
    assert str(path) in str(caught.value)


# -- the runs' inputs and --out -----------------------------------------------------------------
def test_empty_annotation_list_writes_nothing(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (toy_data / "toy.json").write_text("[]")
    out = tmp_path / "out"
    assert main(_eval(toy_data, out)) == 2
    _one_error_line(capsys, "nothing to evaluate", "no examples")
    _no_outputs(out)


def test_huge_png_is_a_data_error_naming_it(tmp_path: Path) -> None:
    """20,000 x 20,000 px: PIL's decompression-bomb guard refuses it before decoding (the CLIP
    package's tests run it through `abduct eval`)."""
    from abduct.kit.drawing import load_rgb

    path = tmp_path / "huge.png"
    Image.new("1", (20_000, 20_000)).save(path)
    with pytest.raises(DataError, match="huge.png.*too large"):
        load_rgb(str(path))


def test_device_bogus_is_refused_before_anything_runs(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    outcome = run_cli(_eval(toy_data, tmp_path / "out", "--device", "bogus"))
    assert outcome.code == 2 and clean_failure_problem(outcome) is None
    assert "unknown device 'bogus'" in outcome.err
    assert not (tmp_path / "out").exists()


def test_device_cuda_with_a_model_without_torch_is_a_documented_acceptance(
        toy_registry: Registry, toy_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`random` runs on the CPU whatever --device says; torch models check the GPU (the CLIP
    package's tests hold them to it)."""
    assert main(_eval(toy_data, tmp_path / "out", "--device", "cuda")) == 0


def test_cache_dir_that_is_a_file(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    cache.write_text("not a directory")
    out = tmp_path / "out"
    assert main(_eval(toy_data, out, "--cache-dir", str(cache))) == 2
    _one_error_line(capsys, "--cache-dir", "is a file")
    _no_outputs(out)


def test_out_that_is_a_file(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.write_text("x")
    assert main(_eval(toy_data, out)) == 2
    _one_error_line(capsys, "--out", "is a file")


def _read_only(directory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``directory`` read-only; as root (who may write anyway) the file system's answer
    is imitated by refusing creation under it, as the kernel would for another user."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o555)
    if os.geteuid() != 0:
        return

    def refuse(path: Path) -> None:
        if str(path).startswith(str(directory)):
            raise PermissionError(13, "Permission denied", str(path))

    for name in ("mkdir", "touch"):
        original = getattr(pathlib.Path, name)

        def patched(self: Path, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            if not self.exists():
                refuse(self)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(pathlib.Path, name, patched)


@pytest.mark.parametrize("where", ["out itself", "under it"])
def test_read_only_out(toy_registry: Registry, toy_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str], where: str) -> None:
    locked_dir = tmp_path / "ro"
    _read_only(locked_dir, monkeypatch)
    out = locked_dir if where == "out itself" else locked_dir / "run"
    try:
        assert main(_eval(toy_data, out)) == 2
        _one_error_line(capsys, str(out), "Permission denied")
    finally:
        locked_dir.chmod(0o755)
    _no_outputs(out)


def test_out_holding_another_finished_run_needs_overwrite(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(_eval(toy_data, out)) == 0
    first = (out / "results.json").read_text()
    capsys.readouterr()
    assert main(_eval(toy_data, out, model="constant")) == 2
    _one_error_line(capsys, "finished run of toy-choice / random", "different model", "--overwrite")
    assert (out / "results.json").read_text() == first
    assert main(_eval(toy_data, out)) == 0  # the same configuration again: allowed
    capsys.readouterr()
    assert main(_eval(toy_data, out, "--overwrite", model="constant")) == 0
    assert json.loads((out / "results.json").read_text())["model"]["spec"] == "constant"
    assert half_written_problem(out) is None


def test_lock_refuses_a_second_run_on_the_same_out(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with locked(out):
        assert main(_eval(toy_data, out)) == 2
        _one_error_line(capsys, "being written by another abduct run")
    assert not (out / LOCK_FILE).exists()
    assert main(_eval(toy_data, out)) == 0  # free again


def test_outputs_appear_only_when_all_are_rendered(toy_registry: Registry, toy_data: Path, tmp_path: Path) -> None:
    class BrokenPages:
        @hookimpl
        def render_run_pages(self, out_dir: Path) -> None:
            raise RuntimeError("a bug while drawing the report")

    reset_registry(build_registry(extra_plugins=[("toy", ToyPlugin()), ("broken-pages", BrokenPages())]))
    out = tmp_path / "out"
    with pytest.raises(RuntimeError):
        main(_eval(toy_data, out))
    _no_outputs(out)


def test_non_finite_metric_writes_nothing(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import abduct_testing.toy

    monkeypatch.setattr(abduct_testing.toy, "accuracy", lambda records: math.nan)
    out = tmp_path / "out"
    assert main(_eval(toy_data, out)) == 2
    _one_error_line(capsys, "metric 'accuracy' came out nan")
    _no_outputs(out)


def test_file_system_errors_anywhere_are_one_line(toy_registry: Registry, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's last guard: an OSError a command did not foresee names the path."""
    target = tmp_path / "file"
    target.write_text("x")
    refs = tmp_path / "refs.json"
    refs.write_text("{}")
    assert main(["score", "toy-choice", "--predictions", str(tmp_path), "--answer-key", str(refs)]) == 2
    _one_error_line(capsys, str(tmp_path))


# -- outputs never replace a device, FIFO or socket -------------------------------------------
def test_atomic_writes_refuse_what_is_not_a_regular_file(tmp_path: Path) -> None:
    from abduct.kit.io import atomic_write_text

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/null"), tmp_path):
        with pytest.raises(AbductError, match="refusing to replace it") as caught:
            atomic_write_text(target, "x")
        assert "\n" not in str(caught.value)
    assert fifo.exists() and not fifo.is_file() and Path("/dev/null").is_char_device()
    atomic_write_text(tmp_path / "new.txt", "x")  # a new path and a regular file are fine
    atomic_write_text(tmp_path / "new.txt", "y")
    assert (tmp_path / "new.txt").read_text() == "y"



def test_a_warning_is_one_line_without_the_source_line(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import warnings

    import click

    import abduct._cli

    @click.command()
    def warns() -> None:
        warnings.warn("span 3-9 s ends past the video's end; clipped", UserWarning, stacklevel=1)

    monkeypatch.setattr(abduct._cli, "build_cli", lambda: warns)
    assert main([]) == 0
    err = capsys.readouterr().err
    assert err == "warning: span 3-9 s ends past the video's end; clipped\n"
