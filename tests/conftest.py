from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Read by libraries when they are imported, not when a command runs: a run that sets one must be
# a real process (`abduct_process`), or the value would silently not apply.
IMPORT_TIME_VARIABLES = frozenset({"PYTHONPATH", "PYTHONWARNINGS", "PYTHONHASHSEED", "HF_HUB_OFFLINE",
                                   "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HOME", "HF_HUB_CACHE",
                                   "HF_ENDPOINT", "TRANSFORMERS_CACHE", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                   "TORCH_HOME", "XDG_CACHE_HOME", "ABDUCT_DISABLE_PLUGINS"})


def abduct_process(*args: str, env: dict[str, str] | None = None,
                   cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed `abduct` CLI in a fresh interpreter, as a user's shell would: for what
    only a process shows (its exit status, everything written to its file descriptors, a plugin
    that breaks at import, variables read at import time). Each call re-imports whatever the
    command needs (torch and open_clip take 10-18 s), so keep these few."""
    return subprocess.run(
        [sys.executable, "-m", "abduct", *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=cwd,
    )


def abduct(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `abduct ARGS` in this process (torch and the models' libraries are imported once for
    the session) and answer as `abduct_process` does: the exit code `main` returns, what it
    printed, and, for an exception that escaped, the traceback on stderr with exit code 1.
    ``env`` and ``cwd`` apply for the run only. Where a run could leave state behind, each starts
    as a fresh process would and leaves nothing to the next: Python's default warning filters
    (each warning shown again), loggers that write to this run's stdout and stderr, torch's
    thread count and deterministic mode put back afterwards."""
    if env and (late := IMPORT_TIME_VARIABLES & set(env)):
        raise ValueError(f"{sorted(late)} are read at import time: use abduct_process")
    out, err = io.StringIO(), io.StringIO()
    crash = None
    with _scoped(env or {}, cwd), _fresh_process_state(out, err), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        from abduct_testing import main

        try:
            code = main(list(args))
        except SystemExit as exc:  # as the interpreter would exit
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=err)
        except Exception:  # an uncaught exception: a traceback and exit 1, as in a process
            code, crash = 1, traceback.format_exc()
    stderr = err.getvalue() + (crash or "")
    return subprocess.CompletedProcess(["abduct", *args], code, out.getvalue(), stderr)


@contextlib.contextmanager
def _scoped(env: dict[str, str], cwd: Path | None) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in env}
    here = os.getcwd()
    os.environ.update(env)
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(here)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _stream_handlers() -> list[logging.StreamHandler]:  # type: ignore[type-arg]
    known = list(logging.Logger.manager.loggerDict.values())  # a copy: other threads may add loggers
    loggers = [logging.getLogger(), *(v for v in known if isinstance(v, logging.Logger))]
    return [h for lg in loggers for h in lg.handlers if isinstance(h, logging.StreamHandler)
            and not isinstance(h, logging.FileHandler) and not type(h).__module__.startswith("_pytest")
            and not isinstance(getattr(type(h), "stream", None), property)]  # logging.lastResort: sys.stderr


@contextlib.contextmanager
def _fresh_process_state(out: io.StringIO, err: io.StringIO) -> Iterator[None]:
    # loggers that write to the process's stdout/stderr write to this run's instead
    real = {id(sys.__stdout__): out, id(sys.stdout): out, id(sys.__stderr__): err, id(sys.stderr): err}
    moved = [(h, h.stream) for h in _stream_handlers() if id(h.stream) in real]
    for handler, stream in moved:
        handler.setStream(real[id(stream)])
    torch = sys.modules.get("torch")
    if torch is not None:
        threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
        warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    try:
        with warnings.catch_warnings():
            warnings.resetwarnings()  # a fresh interpreter's filters, not pytest's
            warnings.simplefilter("ignore", ResourceWarning)
            warnings.simplefilter("ignore", ImportWarning)
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
            yield
    finally:
        for handler, stream in moved:
            handler.setStream(stream)
        for handler in _stream_handlers():  # made during the run: the process's streams from now on
            if handler.stream is out or handler.stream is err:
                handler.setStream(sys.__stdout__ if handler.stream is out else sys.__stderr__)
        if torch is not None:
            torch.set_num_threads(threads)
            torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
        elif "torch" in sys.modules:  # imported by this run: a fresh import's mode from now on
            sys.modules["torch"].use_deterministic_algorithms(False)


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """The models here are tiny: a second intra-op thread buys no time, and on a shared 2-core
    machine its spinning costs 2-3x the CPU (50 t5:tiny training steps: 26 CPU-s on two
    threads, 10 on one). Commands run in this process use one; real processes keep their own."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def build_wheel(project: Path, out: Path) -> Path:
    """A wheel of ``project`` built with its own build backend in an isolated environment, as a
    user's ``pip install`` or a release builds it; returns the wheel."""
    out.mkdir(parents=True, exist_ok=True)
    if uv := _uv():
        subprocess.run([uv, "build", "-q", "--wheel", "-o", str(out), str(project)], check=True)
    else:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(project)],
                       check=True)
    (wheel,) = out.glob("*.whl")
    return wheel


def _uv() -> str | None:
    found = shutil.which("uv") or Path(__file__).parents[1] / ".venv-tools" / "bin" / "uv"
    if not Path(found).is_file():
        return None
    sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))
    from pip_to_uv import uv_like_pip  # uv does not read pip's indexes and wheel folders: hand them over

    uv_like_pip()
    return str(found)


def fresh_venv(venv: Path) -> list[str]:
    """An empty environment; returns the command that installs into it (``pip install`` as the page says)."""
    pins = ["-c", str(Path(__file__).parents[1] / "constraints.txt")]  # the torch build the machines carry
    if uv := _uv():  # seconds: uv hard-links from its cache
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
        return [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *pins]
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *pins]
