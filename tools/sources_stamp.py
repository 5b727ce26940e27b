"""A fingerprint of what ``pip install ARGS`` would install from this checkout.

    python tools/sources_stamp.py ARGS...

Prints one SHA-256 over the arguments and the content of every file of each local package
directory among them (``./packages/core[report]`` counts ``packages/core``; its tests, caches
and build folders do not, as they are not installed). ``./dev demo`` compares it with the one
stored in ``.venv`` when it was filled, and skips the install when nothing changed.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_INSTALLED = {"tests", "__pycache__", "build", "dist", ".pytest_cache", ".mypy_cache"}


def package_files(directory: Path) -> list[Path]:
    return sorted(path for path in directory.rglob("*") if path.is_file()
                  and not NOT_INSTALLED & set(path.relative_to(directory).parts)
                  and not any(part.endswith(".egg-info") for part in path.parts))


def stamp(args: list[str]) -> str:
    digest = hashlib.sha256()
    for arg in args:
        digest.update(arg.encode() + b"\0")
        directory = ROOT / re.sub(r"\[.*\]$", "", arg)
        if arg.startswith("./") and directory.is_dir():
            for path in package_files(directory):
                digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        elif (ROOT / arg).is_file():  # a constraints or requirements file
            digest.update((ROOT / arg).read_bytes())
    return digest.hexdigest()


if __name__ == "__main__":
    print(stamp(sys.argv[1:]))
