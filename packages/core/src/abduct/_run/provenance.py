"""What results.json records about where a number came from."""

from __future__ import annotations

import contextlib
import importlib.metadata as md
import json
import subprocess
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from abduct.kit.io import sha256_file

_THIRD_PARTY = (
    "numpy", "pillow", "pluggy", "torch", "torchvision", "open_clip_torch", "transformers",
    "pycocoevalcap", "bert-score", "lapjv", "decord", "scipy",
)


def package_versions() -> dict[str, str]:
    """Versions of every installed abduct distribution and of the libraries numbers depend on."""
    versions: dict[str, str] = {}
    for dist in md.distributions():
        name = dist.metadata["Name"] or ""
        if name.lower().startswith("abduct") or name.lower() in _THIRD_PARTY:
            versions[name] = dist.version
    versions["python"] = sys.version.split()[0]
    return dict(sorted(versions.items()))


def _git(where: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


@cache
def _checkout_state(directory: Path) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git work tree ``directory`` lies in, for that directory only."""
    head = _git(directory, "rev-parse", "HEAD")
    if head is None:
        return None, None
    status = _git(directory, "status", "--porcelain", "--", ".")
    return head.strip() or None, None if status is None else bool(status.strip())


def distribution_source(name: str) -> dict[str, Any] | None:
    """Where the installed distribution ``name`` came from (PEP 610 ``direct_url.json``):
    ``{"version", "url", "editable", "revision", "dirty"}``. A local directory's revision and
    dirty flag are read from that directory's own git work tree — never from whatever
    repository happens to enclose the environment; a VCS install carries its commit; an
    index install has only its version. None when ``name`` is not installed."""
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        return None
    source: dict[str, Any] = {"version": dist.version, "url": None, "editable": False, "revision": None,
                              "dirty": None}
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        direct = None
    if not isinstance(direct, dict):
        return source
    source["url"] = direct.get("url")
    source["editable"] = bool((direct.get("dir_info") or {}).get("editable"))
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict):
        source["revision"] = vcs.get("commit_id")
    elif str(source["url"] or "").startswith("file://") and "dir_info" in direct:
        directory = Path(unquote(urlsplit(str(source["url"])).path))
        if directory.is_dir():
            source["revision"], source["dirty"] = _checkout_state(directory)
    return source


def abduct_sources() -> dict[str, dict[str, Any]]:
    """``distribution_source`` of every installed abduct distribution, by name."""
    names = sorted({dist.metadata["Name"] for dist in md.distributions()
                    if (dist.metadata["Name"] or "").lower().startswith("abduct")})
    return {name: source for name in names if (source := distribution_source(name)) is not None}


def file_hashes(paths: Iterable[Path], root: Path | None = None) -> dict[str, str]:
    """sha256 of each file, keyed by its path relative to ``root`` when it lies inside."""
    out: dict[str, str] = {}
    for path in map(Path, paths):
        label = str(path)
        if root is not None:
            with contextlib.suppress(ValueError):  # outside ``root``: its own path
                label = str(path.resolve().relative_to(Path(root).resolve()))
        out[label] = sha256_file(path)
    return out
