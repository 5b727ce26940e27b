"""Errors that say what: a full disk, a file over the size limit or a refused permission names the
file abduct was writing, in one line with exit 2, also where the system names none (write(2),
fsync(2) and close(2) report no file name)."""

from __future__ import annotations

import errno
import os
import re
import resource
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from abduct._cli import main
from abduct._registry.registry import Registry, build_registry, reset_registry
from abduct.contract.errors import AbductError
from toy_plugin import ToyPlugin, write_toy_data

FAULTS = [(errno.ENOSPC, "No space left on device"), (errno.EFBIG, "File too large"),
          (errno.EDQUOT, "Disk quota exceeded"), (errno.EACCES, "Permission denied")]


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    monkeypatch.setenv("ABDUCT_DISABLE_PLUGINS", "report")
    registry = build_registry(extra_plugins=[("toy", ToyPlugin())])
    reset_registry(registry)
    yield registry
    reset_registry()


def _eval(data: Path, out: Path) -> list[str]:
    return ["eval", "toy-choice", "--model", "random", "--data", str(data), "--out", str(out), "--quiet", "--no-cache"]


@pytest.mark.parametrize("call", ["write", "fsync"])
@pytest.mark.parametrize(("code", "said"), FAULTS)
def test_a_write_that_fails_without_a_file_name_is_named(registry: Registry, tmp_path: Path, call: str, code: int,
                                                         said: str, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The kernel's error for write(2) or fsync(2), as Python raises it: an errno, no file name."""
    data = write_toy_data(tmp_path / "data", items=6)
    out = tmp_path / "run"

    def failing(*args: Any) -> Any:
        raise OSError(code, said)

    if call == "fsync":
        monkeypatch.setattr(os, "fsync", failing)
    else:
        real = os.fdopen

        class Full:
            """The file object a write goes through, on a disk that refuses the data."""

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                self.handle = real(*args, **kwargs)

            def __enter__(self) -> Full:
                return self

            def __exit__(self, *exc: object) -> None:
                self.handle.close()

            write = failing

        monkeypatch.setattr(os, "fdopen", Full)
    capsys.readouterr()
    assert main(_eval(data, out)) == 2
    err = capsys.readouterr().err
    named = re.fullmatch(rf"error: (\S+): {said}\n", err)
    assert named, err
    assert Path(named[1]).parent.resolve() in {out.resolve(), (out / ".partial").resolve()}, err


def test_a_file_over_the_size_limit_is_named(tmp_path: Path) -> None:
    """A real RLIMIT_FSIZE (``ulimit -f``): Python ignores SIGXFSZ, so write(2) fails with EFBIG."""
    data = write_toy_data(tmp_path / "data", items=40)
    out = tmp_path / "run"
    script = textwrap.dedent(f"""
        import os, sys
        os.environ["ABDUCT_DISABLE_PLUGINS"] = "report"
        sys.path[:0] = [{str(Path(__file__).parent)!r}]
        from abduct._cli import main
        from abduct._registry.registry import build_registry, reset_registry
        from toy_plugin import ToyPlugin

        reset_registry(build_registry(extra_plugins=[("toy", ToyPlugin())]))
        sys.exit(main({_eval(data, out)!r}))
    """)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          preexec_fn=limited, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 2, done.stderr
    named = re.fullmatch(r"error: (\S+): File too large\n", done.stderr)
    assert named and Path(named[1]).resolve().is_relative_to(out.resolve()), done.stderr


def test_a_write_into_a_building_folder_names_the_folder(tmp_path: Path) -> None:
    """What a ``synth`` writes through: a write that fails names at least the folder being built."""
    from abduct.kit import building_folder

    with pytest.raises(OSError) as raised, building_folder(tmp_path / "corpus") as folder:
        with open(folder / "a.json", "wb") as handle:
            handle.write(b"{}")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert raised.value.filename == str((tmp_path / "corpus").resolve())
    assert not (tmp_path / "corpus").exists()


def test_a_refused_input_names_the_tasks_option_that_gives_inputs_without_it(tmp_path: Path) -> None:
    """``input_options`` as the refusal of a model uses it; each malformed declaration one line."""
    from abduct import PluginError, VisualInput
    from abduct._engine.inputs import InputPolicy
    from abduct.host import task_traits

    class TextOnly:
        accepts = frozenset({"context"})

        def score(self, visuals: Any, texts: Any) -> Any:
            raise AssertionError("never called")

    policy = InputPolicy(TextOnly(), "text-only")
    policy.remedies = {"video": "clips,setup=text"}
    with pytest.raises(AbductError) as refused:
        policy.prepare(VisualInput.video(str(tmp_path / "v.mp4"), ((0.0, 1.0),)))
    assert str(refused.value) == ("model 'text-only' cannot take video inputs, which this task gives (it accepts "
                                  "context); the task without video inputs is clips,setup=text")

    class Task:
        default_split = "val"
        input_options: Any = {"video": "setup=text"}

    assert task_traits(Task(), "clips").input_options == {"video": "setup=text"}
    for wrong in ({"depth": "setup=text"}, {"video": "text"}, {"video": 3}, ["video"]):
        Task.input_options = wrong
        with pytest.raises(PluginError, match="task 'clips' declares .*input_options"):
            task_traits(Task(), "clips")
