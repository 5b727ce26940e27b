"""The command that installs one of abduct's own distributions where this abduct came from, for
every hint that names a missing package.

Installed from a checkout (abduct-core's PEP 610 ``direct_url.json`` is a local folder, editable
or not), the distributions are folders of that checkout, and ``pip install abduct-sherlock``
would fail: the hint is ``pip install ./packages/datasets/sherlock``. Installed from an index, it
is the name. A checkout's folders are read from its ``pyproject.toml`` files when a hint is
built, so no table has to follow the tree."""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import shlex
import tomllib
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

CORE = "abduct-core"
# where a checkout keeps its distributions, each a folder with its pyproject.toml
LAYOUT = ("packages/*/pyproject.toml", "packages/*/*/pyproject.toml", "examples/*/pyproject.toml")
_REQUIREMENT = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9._,\s-]*\])?")


def _core_direct_url() -> str | None:
    """abduct-core's ``direct_url.json``: None for an index install (and when it is not installed)."""
    try:
        return md.distribution(CORE).read_text("direct_url.json")
    except md.PackageNotFoundError:
        return None


def installed_from_checkout() -> Path | None:
    """The checkout abduct-core was installed from (the folder that holds ``packages/core``),
    editable or not; None when it came from an index, a wheel, or a folder that is gone."""
    try:
        direct = json.loads(_core_direct_url() or "null")
    except ValueError:
        return None
    if not isinstance(direct, dict) or "dir_info" not in direct:
        return None
    url = urlsplit(str(direct.get("url") or ""))
    if url.scheme != "file":
        return None
    core = Path(url2pathname(url.path))
    if core.name != "core" or core.parent.name != "packages" or not core.is_dir():
        return None
    return core.parent.parent


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def checkout_folders(root: Path) -> dict[str, Path]:
    """The distributions of the checkout ``root``: canonical name -> folder."""
    found: dict[str, Path] = {}
    for pattern in LAYOUT:
        for pyproject in sorted(root.glob(pattern)):
            try:
                name = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if isinstance(name, str):
                found[_canonical(name)] = pyproject.parent
    return found


def _shorter_path(folder: Path) -> str:
    """``folder`` relative to the working directory (``./...``) when that is shorter."""
    absolute = str(folder)
    try:
        relative = os.path.relpath(folder)
    except (OSError, ValueError):  # no working directory, or another drive
        return absolute
    if not relative.startswith(os.pardir):
        relative = os.curdir if relative == os.curdir else os.path.join(os.curdir, relative)
    return relative if len(relative) < len(absolute) else absolute


def install_command(*requirements: str) -> str:
    """``pip install`` and ``requirements`` (``"abduct-sherlock"``, ``"abduct-whoops[hf]"``,
    ``"matplotlib"``), each of abduct's own distributions named as it installs here: its folder
    in the checkout abduct-core was installed from, else its name on the index. Anything else
    stays as given. Quoted for a POSIX shell."""
    root = installed_from_checkout()
    folders = checkout_folders(root) if root is not None else {}
    words = []
    for requirement in requirements:
        match = _REQUIREMENT.fullmatch(requirement.strip())
        folder = folders.get(_canonical(match.group(1))) if match else None
        if match is not None and folder is not None:
            requirement = _shorter_path(folder) + (match.group(2) or "").replace(" ", "")
        words.append(shlex.quote(requirement))
    return " ".join(["pip install", *words])
