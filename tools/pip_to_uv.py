"""uv does not read pip's configuration: the indexes, wheel folders and CA bundle that pip is
configured with, as the environment variables uv reads.

Used by noxfile.py (``uv_like_pip()``: the test environments) and by ``./dev`` (the demo's
``.venv``), which runs ``python tools/pip_to_uv.py`` and exports the ``NAME=value`` lines it prints.
"""

from __future__ import annotations

import ast
import os
import shlex
import subprocess
import sys

# pip's options that uv takes from environment variables, and the separator uv wants between values
PIP_TO_UV = [
    ("index-url", "UV_INDEX_URL", " "),
    ("extra-index-url", "UV_EXTRA_INDEX_URL", " "),
    ("find-links", "UV_FIND_LINKS", ","),
    ("cert", "SSL_CERT_FILE", " "),
]


def pip_settings() -> dict[str, str]:
    """pip's configured options, from ``pip config list`` (``pip config get`` reads one file only)."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    settings = {}
    for section in ("global.", "install.", ":env:."):  # lowest precedence first, as pip install reads them
        for key, _, value in (line.partition("=") for line in listed.splitlines()):
            if key.startswith(section):
                settings[key.removeprefix(section)] = ast.literal_eval(value)
    return settings


def uv_variables(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The variables to set for uv (those already set in ``environ`` are the user's: kept)."""
    environ = dict(os.environ) if environ is None else environ
    pip = pip_settings()
    out: dict[str, str] = {}
    for option, variable, separator in PIP_TO_UV:
        if option in pip and variable not in environ:
            out[variable] = separator.join(pip[option].split())
            if option == "extra-index-url" and "UV_INDEX_STRATEGY" not in environ:
                out["UV_INDEX_STRATEGY"] = "unsafe-best-match"  # pip takes the best version across indexes, uv the first's
    return out


def uv_like_pip() -> None:
    """Set the variables in this process's environment (inherited by the uv it starts)."""
    os.environ.update(uv_variables())


if __name__ == "__main__":
    for name, value in uv_variables().items():
        print(f"{name}={shlex.quote(value)}")
