"""What results.json records about where a number came from."""

from __future__ import annotations

import importlib.metadata as md
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from abduct.io import sha256_file

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


def git_revision(path: Path | None = None) -> str | None:
    """The commit of the source tree abduct runs from, when it runs from a git checkout."""
    where = path or Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def file_hashes(paths: Iterable[Path], root: Path | None = None) -> dict[str, str]:
    """sha256 of each file, keyed by its path relative to ``root`` when it lies inside."""
    out: dict[str, str] = {}
    for path in paths:
        path = Path(path)
        label = str(path)
        if root is not None:
            try:
                label = str(path.resolve().relative_to(Path(root).resolve()))
            except ValueError:
                pass
        out[label] = sha256_file(path)
    return out
