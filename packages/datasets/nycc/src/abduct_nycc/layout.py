"""Where the parquet configs are: a local copy of the Hugging Face repo
``jmhessel/newyorker_caption_contest`` (``huggingface-cli download ... --local-dir DIR``) or the
hub cache (``DIR`` = the cache root, the repo's ``datasets--jmhessel--newyorker_caption_contest``
folder, or one of its ``snapshots/<revision>``).

Configs are named ``<task>[_from_pixels][_<k>]`` (fold 0 unsuffixed, folds 1-4 ``_1``..``_4``)
and hold ``<split>-<i>-of-<n>.parquet`` files (``train``, ``validation``, ``test``) on the repo's
``main`` branch. Any other layout (the auto-converted ``refs/convert/parquet`` branch's file
names, a folder without configs) is refused in one line naming what was found.
"""

from __future__ import annotations

import re
from pathlib import Path

from abduct import AbductError, DataError
from abduct.kit import require_dir
from abduct.kit.io import hub_snapshot

REPO_FOLDER = "datasets--jmhessel--newyorker_caption_contest"
SPLITS = ("train", "validation", "test")
_CONFIG = re.compile(r"^(matching|ranking|explanation)(_from_pixels)?(_[1-4])?$")


def config_name(task: str, fold: int, configs: str = "description") -> str:
    """``matching``, ``ranking_from_pixels_3``, ...: the release's config of a task, input and fold."""
    return task + ("_from_pixels" if configs == "pixels" else "") + (f"_{fold}" if fold else "")


def _has_configs(folder: Path) -> bool:
    return any(p.is_dir() and _CONFIG.match(p.name) for p in folder.iterdir()) if folder.is_dir() else False


def repo_root(data_dir: Path) -> Path:
    """The folder holding the configs (see the module docstring), or a one-line refusal."""
    data_dir = require_dir(Path(data_dir), "NYCC data directory")
    if _has_configs(data_dir):
        return data_dir
    for folder in (data_dir, data_dir / REPO_FOLDER, data_dir / "hub" / REPO_FOLDER):
        found = hub_snapshot(folder, _has_configs)
        if found is not None:
            return found
    names = sorted(p.name for p in data_dir.iterdir())[:12]
    raise AbductError(f"{data_dir}: no NYCC configs (folders such as matching/, ranking_from_pixels_2/ holding "
                      f"<split>-00000-of-00001.parquet) nor a hub-cache snapshot of {REPO_FOLDER}; found: "
                      f"{', '.join(names) or 'nothing'}")


def split_files(root: Path, config: str, split: str) -> list[Path]:
    """The parquet files of ``config``'s ``split``, in shard order; a missing config or split is one line."""
    folder = root / config
    if not folder.is_dir():
        present = sorted(p.name for p in root.iterdir() if p.is_dir() and _CONFIG.match(p.name))
        raise AbductError(f"{root}: config '{config}' is not there (configs found: {', '.join(present) or 'none'}); "
                          f"download it with huggingface-cli download jmhessel/newyorker_caption_contest "
                          f"--repo-type dataset --include '{config}/*'")
    files = sorted(folder.glob(f"{split}-*-of-*.parquet"))
    if not files:
        found = sorted(p.name for p in folder.iterdir())[:8]
        raise DataError(f"no {split}-NNNNN-of-NNNNN.parquet (found: {', '.join(found) or 'nothing'})", file=folder)
    return files
