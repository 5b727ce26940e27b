"""Which torch build ``./dev`` installs into ``.venv`` (``./dev demo``, ``./dev bench``).

Without a GPU, torch's default wheels from PyPI still carry CUDA (a ``.venv`` of about 6.7 GB):
ask torch's CPU index instead (uv's ``UV_TORCH_BACKEND=cpu``). Where that index cannot be reached
(a machine whose only index is a mirror, with torch in a local wheel folder), install the default
build and say so in one line. A GPU, or a ``UV_TORCH_BACKEND`` the user set, keeps uv's default.

``./dev`` runs ``python tools/torch_build.py`` and exports the ``NAME=value`` lines it prints;
the note, if any, goes to stderr. ``./dev test`` does not use it: its environments take torch
from uv's cache, already filled.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PROBE_TIMEOUT_S = 3.0  # an unreachable index answers nothing: wait this long at most, once per install


@dataclass(frozen=True)
class Choice:
    variables: dict[str, str] = field(default_factory=dict)  # for uv's environment
    note: str | None = None  # one line for the user


def gpu_present(dev: Path = Path("/dev"), search_path: str | None = None) -> bool:
    """An NVIDIA GPU's driver is here: ``nvidia-smi`` on PATH or a ``/dev/nvidia*`` node."""
    return shutil.which("nvidia-smi", path=search_path) is not None or any(dev.glob("nvidia*"))


def index_reachable(url: str = CPU_INDEX, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether ``url``'s torch page answers (a proxy's refusal or a timeout: not reachable)."""
    request = urllib.request.Request(f"{url}/torch/", method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (a fixed https URL)
            return bool(response.status < 400)
    except (OSError, ValueError):  # URLError, HTTPError and timeouts are OSErrors
        return False


def choose(gpu: bool, cpu_index_reachable: Callable[[], bool], environ: dict[str, str]) -> Choice:
    """The build to install; the index is probed only when the answer depends on it."""
    if gpu or "UV_TORCH_BACKEND" in environ:
        return Choice()
    if cpu_index_reachable():
        return Choice({"UV_TORCH_BACKEND": "cpu"}, f"no GPU here: installing torch's CPU build ({CPU_INDEX})")
    return Choice(note=f"no GPU here, but torch's CPU index ({CPU_INDEX}) cannot be reached: "
                       "installing the default torch build")


def main() -> None:
    choice = choose(gpu_present(), index_reachable, dict(os.environ))
    if choice.note:
        print(choice.note, file=sys.stderr)
    for name, value in choice.variables.items():
        print(f"{name}={shlex.quote(value)}")


if __name__ == "__main__":
    main()
